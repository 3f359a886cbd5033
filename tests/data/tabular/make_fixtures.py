#!/usr/bin/env python3
"""Writes the CSV and SQLite fixtures of kiln::data::CsvDataset / SqliteDataset and
kiln.data.CsvDataset / SqliteDataset (tests/native/data/tabular_test.cpp,
tests/js/data_tabular.test.mjs), and what they must give, computed here independently:
Python's csv and sqlite3 modules read the files, float() and struct round to float32, and
PyTorch 1.13 trains the MNIST-like model.

    /usr/bin/python3 tests/data/tabular/make_fixtures.py   # rewrites the files beside it

Files:
  small.csv, small.db (table "flowers")  the same 6 rows: quoted fields, a quoted line break
      in an unused column, string labels, a missing value, spaces around numbers, exponents,
      CRLF line ends and a UTF-8 byte-order mark (CSV)
  small.expected.json   the items both must give (features float32, labels, classes)
  mnist_like.csv, mnist_like.db (table "train")   200 rows: label, pixel0..pixel783 (0..255)
  mnist_like.expected.json   PyTorch's weights after one epoch of SGD (see train_reference)
  malformed/*               bad inputs; malformed.json lists each with the error expected
"""
import csv
import io
import json
import os
import random
import sqlite3
import struct

HERE = os.path.dirname(os.path.abspath(__file__))


def f32(x):
    return struct.unpack("<f", struct.pack("<f", float(x)))[0]


def write(name, data):
    path = os.path.join(HERE, name)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(data)


def new_db(name):
    path = os.path.join(HERE, name)
    if os.path.exists(path):
        os.remove(path)
    return sqlite3.connect(path), path


# ---------------------------------------------------------------- small
SMALL_ROWS = [
    # id, sepal_length, sepal_width, note (unused, quoted), species
    ("1", "5.1", " 3.5 ", 'plain', "setosa"),
    ("2", "4.9", "3.0e0", 'a "quoted" word, and a comma', "setosa"),
    ("3", "7.0", "", "two\nlines", "versicolor"),  # missing sepal_width
    ("4", "+6.4", ".32E1", "", "versicolor"),
    ("5", "6.3", "3.3", "é ünïcødé", "virginica"),
    ("6", "-0.25", "1e-50", "tiny", "setosa"),
]
SMALL_FILL = -1.0


def make_small():
    out = io.StringIO()
    w = csv.writer(out, lineterminator="\r\n", quoting=csv.QUOTE_MINIMAL)
    w.writerow(["id", "sepal_length", "sepal_width", "note", "species"])
    for row in SMALL_ROWS:
        w.writerow(row)
    text = out.getvalue()
    write("small.csv", b"\xef\xbb\xbf" + text.encode("utf-8"))

    # Read back with Python's csv module: the independent source of the expected items.
    rows = list(csv.reader(io.StringIO(text)))
    header, body = rows[0], rows[1:]
    classes, items = [], []
    for r in body:
        rec = dict(zip(header, r))
        feats = []
        for name in ("sepal_length", "sepal_width"):
            v = rec[name].strip(" \t")
            feats.append(f32(SMALL_FILL) if v == "" else f32(float(v)))
        if rec["species"] not in classes:
            classes.append(rec["species"])
        items.append({"features": feats, "label": classes.index(rec["species"])})

    db, path = new_db("small.db")
    db.execute("CREATE TABLE flowers (id INTEGER PRIMARY KEY, sepal_length REAL, "
               "sepal_width REAL, note TEXT, species TEXT)")
    for r in body:
        rec = dict(zip(header, r))
        sw = rec["sepal_width"].strip()
        db.execute("INSERT INTO flowers VALUES (?, ?, ?, ?, ?)",
                   (int(rec["id"]), float(rec["sepal_length"]),
                    None if sw == "" else float(sw), rec["note"], rec["species"]))
    # A second table with integer labels and an INTEGER feature column (SqliteDataset's
    # from_query / column choice tests).
    db.execute("CREATE TABLE numbers (x INTEGER, y REAL, label INTEGER)")
    db.executemany("INSERT INTO numbers VALUES (?, ?, ?)",
                   [(1, 0.5, 0), (-2, 1e-3, 1), (3, None, 2), (16777217, 2.5, 1)])
    db.commit()
    db.close()

    expected = {
        "options": {"features": ["sepal_length", "sepal_width"], "label": "species",
                    "labelType": "string", "fillMissing": SMALL_FILL},
        "classes": classes,
        "items": items,
        "numbers": {  # SELECT x, y, label FROM numbers WHERE x > 0 ORDER BY x, fill 0
            "features": [[f32(1), f32(0.5)], [f32(3), f32(0)], [f32(16777217), f32(2.5)]],
            "labels": [0, 2, 1],
        },
    }
    write("small.expected.json", (json.dumps(expected, indent=1) + "\n").encode())


# ---------------------------------------------------------------- MNIST-like
N_ROWS, N_PIXELS, N_CLASSES = 200, 784, 10
LR, BATCH = 0.1, 20


def init_weight(o, i):
    """The initial weights of both runs and PyTorch's: small, deterministic, float32."""
    return f32(((o * 784 + i) * 7919 % 1000 - 500) * 1e-5)


def init_bias(o):
    return f32((o - 5) * 0.01)


def make_mnist_like():
    rng = random.Random(20)
    # One stroke pattern per class: pixels of a class's template are ink, others mostly 0.
    templates = [set(rng.sample(range(N_PIXELS), 120)) for _ in range(N_CLASSES)]
    rows = []
    for n in range(N_ROWS):
        label = rng.randrange(N_CLASSES)
        pixels = []
        for p in range(N_PIXELS):
            if p in templates[label]:
                pixels.append(rng.randrange(128, 256))
            elif rng.random() < 0.05:
                pixels.append(rng.randrange(0, 256))
            else:
                pixels.append(0)
        rows.append((label, pixels))
    header = ["label"] + [f"pixel{p}" for p in range(N_PIXELS)]
    lines = [",".join(header)] + [",".join(str(v) for v in [label] + pixels) for label, pixels in rows]
    write("mnist_like.csv", ("\n".join(lines) + "\n").encode())

    db, _ = new_db("mnist_like.db")
    db.execute("CREATE TABLE train (label INTEGER, " +
               ", ".join(f"pixel{p} INTEGER" for p in range(N_PIXELS)) + ")")
    db.executemany("INSERT INTO train VALUES (" + ",".join("?" * (N_PIXELS + 1)) + ")",
                   [[label] + pixels for label, pixels in rows])
    db.commit()
    db.close()
    return rows


def train_reference(rows):
    """PyTorch: Linear(784, 10) from init_weight/init_bias, inputs pixel / 255, cross
    entropy (mean over the batch), SGD lr 0.1, batches of 20 in file order, one epoch."""
    import torch
    torch.set_num_threads(1)
    model = torch.nn.Linear(N_PIXELS, N_CLASSES)
    with torch.no_grad():
        model.weight.copy_(torch.tensor([[init_weight(o, i) for i in range(N_PIXELS)]
                                         for o in range(N_CLASSES)], dtype=torch.float32))
        model.bias.copy_(torch.tensor([init_bias(o) for o in range(N_CLASSES)]))
    opt = torch.optim.SGD(model.parameters(), lr=LR)
    x_all = torch.tensor([p for _, p in rows], dtype=torch.float32) / 255
    y_all = torch.tensor([label for label, _ in rows], dtype=torch.int64)
    losses = []
    for start in range(0, N_ROWS, BATCH):
        x, y = x_all[start:start + BATCH], y_all[start:start + BATCH]
        loss = torch.nn.functional.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    label_counts = [sum(1 for label, _ in rows if label == c) for c in range(N_CLASSES)]
    expected = {
        "rows": N_ROWS, "pixels": N_PIXELS, "classes": N_CLASSES, "lr": LR, "batch_size": BATCH,
        "label_counts": label_counts,
        "pixel_sum": sum(sum(p) for _, p in rows),
        "first_row": {"label": rows[0][0], "nonzero": [[i, v] for i, v in enumerate(rows[0][1]) if v]},
        "losses": losses,
        "weight": [[round(v, 9) for v in r] for r in model.weight.detach().tolist()],
        "bias": [round(v, 9) for v in model.bias.detach().tolist()],
    }
    write("mnist_like.expected.json", (json.dumps(expected) + "\n").encode())


# ---------------------------------------------------------------- malformed
def make_malformed():
    """Each bad input with the error both readers must give: code and a regex on the message
    (JS and C++ messages follow the same wording)."""
    cases = []

    def csv_case(name, data, code, pattern, options=None):
        write(f"malformed/{name}", data)
        cases.append({"kind": "csv", "name": name, "file": f"malformed/{name}", "options": options or {},
                      "code": code, "message": pattern})

    def db_case(name, data, code, pattern, table="t", options=None, query=None):
        if data is None:  # a bad request on the good database
            file = "small.db"
        else:
            file = f"malformed/{name}"
            write(file, data)
        c = {"kind": "sqlite", "name": name, "file": file, "table": table,
             "options": options or {}, "code": code, "message": pattern}
        if query is not None:
            c["query"] = query
        cases.append(c)

    lab = {"label": "y"}
    csv_case("ragged_short.csv", b"a,b,y\n1,2,0\n3,1\n", "Format",
             r"line 3: expected 3 fields \(as the header\), got 2", lab)
    csv_case("ragged_long.csv", b"a,b,y\n1,2,0\n3,4,1,5\n", "Format",
             r"line 3: expected 3 fields \(as the header\), got more", lab)
    csv_case("unbalanced_quote.csv", b'a,b,y\n1,2,0\n"3,4,1\n5,6,0\n', "Format",
             r"line 3: a quoted field is not closed at the end of the input \(unbalanced quote\)", lab)
    csv_case("quote_in_unquoted.csv", b'a,b,y\n1,2,0\n3,4"5,1\n', "Format",
             r"line 3: malformed quotes", lab)
    csv_case("text_after_quote.csv", b'a,b,y\n1,2,0\n"3"x,4,1\n', "Format",
             r"line 3: malformed quotes", lab)
    csv_case("not_a_number.csv", b"a,b,y\n1,2,0\n1,abc,1\n", "Value",
             r'line 3, column 2 \("b"\): expected a number, got "abc"', lab)
    csv_case("multiline_then_bad.csv", b'n,a,y\n"x\ny",1,0\n"z",abc,1\n', "Value",
             r'line 4, column 2 \("a"\): expected a number, got "abc"', {"label": "y", "features": ["a"]})
    csv_case("nan.csv", b"a,b,y\n1,nan,0\n", "Value",
             r'line 2, column 2 \("b"\): expected a number, got "nan"', lab)
    csv_case("hex.csv", b"a,b,y\n0x10,1,0\n", "Value",
             r'line 2, column 1 \("a"\): expected a number, got "0x10"', lab)
    csv_case("overflow.csv", b"a,b,y\n1,3.5e38,0\n", "Value",
             r"line 2, column 2 \(\"b\"\): .* is outside float32's range", lab)
    csv_case("missing_value.csv", b"a,b,y\n1,2,0\n\n4,,1\n", "Value",
             r'line 4, column 2 \("b"\): missing value', lab)
    csv_case("missing_label.csv", b"a,b,y\n1,2,\n", "Value",
             r'line 2, column 3 \("y"\): missing label', lab)
    csv_case("negative_label.csv", b"a,b,y\n1,2,-1\n", "Value",
             r'line 2, column 3 \("y"\): class id -1 is outside \[0, 2147483647\]', lab)
    csv_case("huge_label.csv", b"a,b,y\n1,2,+" + b"4" * 120 + b"\n", "Value",
             r'line 2, column 3 \("y"\): class id \+4{120} is outside \[0, 2147483647\]', lab)
    csv_case("float_label.csv", b"a,b,y\n1,2,1.5\n", "Value",
             r'line 2, column 3 \("y"\): expected a class id \(an integer\), got "1.5"', lab)
    csv_case("unknown_class.csv", b"a,y\n1,cat\n2,emu\n", "Value",
             r'line 3, column 2 \("y"\): label "emu" is not one of the 2 classes given',
             {"label": "y", "labelType": "string", "classes": ["cat", "dog"]})
    csv_case("unknown_column.csv", b"a,b,y\n1,2,0\n", "Value",
             r'no feature column "c" \(columns: "a", "b", "y"\)', {"label": "y", "features": ["a", "c"]})
    csv_case("unknown_label.csv", b"a,b\n1,2\n", "Value",
             r'no label column "y" \(columns: "a", "b"\)', lab)
    csv_case("duplicate_column.csv", b"a,b,a\n1,2,3\n", "Format",
             r'column name "a" appears twice \(columns 1 and 3\)')
    csv_case("empty_column_name.csv", b"a,,y\n1,2,0\n", "Format", r"column 2 has an empty name", lab)
    csv_case("empty.csv", b"", "Format", r"no header row \(the input is empty\)")
    csv_case("blank_lines.csv", b"\n\r\n\n", "Format", r"no header row \(the input is blank lines only\)")
    csv_case("utf16.csv", "a,y\n1,0\n".encode("utf-16"), "Format",
             r"UTF-16 byte-order mark \(FF FE\); save the file as UTF-8")
    csv_case("latin1.csv", b"a,y\n1,caf\xe9\n", "Format", r"the text is not valid UTF-8",
             {"label": "y", "labelType": "string"})
    csv_case("utf8_surrogate.csv", b"a,y\n1,\xed\xa0\x80\n", "Format", r"the text is not valid UTF-8",
             {"label": "y", "labelType": "string"})
    csv_case("utf8_cut.csv", b"a,y\n1,\xe2\x82", "Format", r"the text is not valid UTF-8",
             {"label": "y", "labelType": "string"})
    csv_case("binary.csv", b"a,y\n1,0\n\x00\x01\x02", "Format", r"line 3: a NUL byte")
    csv_case("too_many_columns.csv", ("," .join(f"c{i}" for i in range(20)) + "\n").encode(),
             "Limit", r"more than max_columns = 10", {"limits": {"maxColumns": 10}})
    csv_case("too_many_rows.csv", b"a\n1\n2\n3\n4\n", "Limit", r"line 4: more than max_rows = 2",
             {"limits": {"maxRows": 2}})
    csv_case("long_field.csv", b"a\n" + b"1" * 100 + b"\n", "Limit",
             r"line 2, field 1: 100 bytes, more than max_field_bytes = 64", {"limits": {"maxFieldBytes": 64}})
    csv_case("too_many_classes.csv", b"a,y\n1,p\n2,q\n3,r\n", "Limit",
             r'line 4, column 2 \("y"\): label "r" would be class 3, more than max_classes = 2',
             {"label": "y", "labelType": "string", "limits": {"maxClasses": 2}})
    csv_case("too_many_bytes.csv", b"a\n" + b"1\n" * 100, "Limit", r"202 bytes, more than max_bytes = 100",
             {"limits": {"maxBytes": 100}})

    with open(os.path.join(HERE, "small.db"), "rb") as f:
        good_db = f.read()
    db_case("text.db", b"label,pixel0\n1,2\n" * 20, "Format",
            r"not an SQLite database: it starts with 6C 61 62 65 6C 2C 70 69")
    db_case("empty.db", b"", "Format", r"not an SQLite database: the file is empty")
    db_case("short.db", b"SQLite format 3\x00", "Format", r"not an SQLite database: the file has 16 bytes")
    db_case("png.db", b"\x89PNG\r\n\x1a\n" + bytes(200), "Format", r"it starts with 89 50 4E 47 0D 0A 1A 0A")
    db_case("truncated.db", good_db[:1024 + 100], "Format", r"not a database, or a corrupt one",
            table="flowers")
    # Header kept, every page after the first overwritten: the schema page is fine, the
    # table's pages are garbage.
    db_case("corrupt_pages.db", good_db[:4096] + bytes([0xA5]) * (len(good_db) - 4096), "Format",
            r"not a database, or a corrupt one", table="flowers")
    db_case("no_table.db", None, "Value", r'no table "train" \(tables: "flowers", "numbers"\)', table="train")
    db_case("text_feature.db", None, "Value",
            r'row 1, column 4 \("note"\): expected an INTEGER or REAL feature, got TEXT "plain"',
            table="flowers", options={"features": ["sepal_length", "note"]})
    db_case("null_feature.db", None, "Value", r'row 3, column 3 \("sepal_width"\): missing value',
            table="flowers", options={"features": ["sepal_width"]})
    db_case("text_label_as_int.db", None, "Value",
            r'row 1, column 5 \("species"\): expected an INTEGER class id, got TEXT "setosa"',
            table="flowers", options={"label": "species", "features": ["sepal_length"]})
    db_case("write_query.db", None, "Value", r"the query writes to the database|readonly|read-only",
            query="DELETE FROM flowers")
    db_case("two_statements.db", None, "Value", r"more than one statement",
            query="SELECT * FROM flowers; SELECT * FROM numbers")
    db_case("bad_sql.db", None, "Value", r"the query does not compile: no such table: missing_table",
            query="SELECT * FROM missing_table")
    write("malformed.json", (json.dumps(cases, indent=1) + "\n").encode())


if __name__ == "__main__":
    make_small()
    rows = make_mnist_like()
    train_reference(rows)
    make_malformed()
