"""Fixtures for defects found in review (issue 20), written by Debian's PyTorch 1.13 and
Python's sqlite3: run /usr/bin/python3 tests/native/record/make_review_fixtures.py.

pytorch/f64_overflow.pt: {"x": float64 [1e300, 1.0]} (outside float32: loadPytorch must refuse
it, not give Infinity). ../../data/tabular/wal.db: a WAL-mode database (header bytes 18/19 = 2)
with table t(a REAL, y INTEGER) rows (1.5, 0), (2.5, 1), checkpointed into the file.
"""
import os
import sqlite3

import torch

here = os.path.dirname(os.path.abspath(__file__))
torch.save({"x": torch.tensor([1e300, 1.0], dtype=torch.float64)}, os.path.join(here, "pytorch", "f64_overflow.pt"))
db = os.path.join(here, "..", "..", "data", "tabular", "wal.db")
if os.path.exists(db):
    os.remove(db)
con = sqlite3.connect(db)
con.execute("pragma journal_mode=wal")
con.execute("create table t (a REAL, y INTEGER)")
con.executemany("insert into t values (?, ?)", [(1.5, 0), (2.5, 1)])
con.commit()
con.execute("pragma wal_checkpoint(TRUNCATE)")
con.close()
for suffix in ("-wal", "-shm"):
    if os.path.exists(db + suffix):
        os.remove(db + suffix)
