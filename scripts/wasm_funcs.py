#!/usr/bin/env python3
"""Function sizes of a .wasm linked with --profiling-funcs (its name section), demangled.

    python3 scripts/wasm_funcs.py X.wasm [out.tsv]

Prints the code size, and the bytes of the functions whose demangled names match the
iostream / locale / regex / RTTI patterns below (issue 17: the engine formats without
iostreams and is built without RTTI); writes bytes<TAB>name per function to out.tsv.
Parses the module's sections itself (type, import, code, custom "name") and refuses a file
that is not a wasm binary.
"""
import re
import subprocess
import sys

PATTERNS = {
    'ostream/istream/ios': r'basic_ostream|basic_istream|basic_ios\b|basic_ios<|ios_base|basic_streambuf|basic_stringbuf|basic_filebuf|basic_[io]?stringstream|basic_[io]?fstream|__put_character_sequence|ostreambuf_iterator|istreambuf_iterator',
    'locale/facets': r'locale|num_put|num_get|numpunct|ctype<|ctype_byname|codecvt|collate|moneypunct|money_get|money_put|time_get|time_put|messages<|__num_put|__num_get',
    'regex': r'regex|__match_|__state<|__bracket_expression|__node<',
    'typeinfo': r'typeinfo|type_info|__class_type_info|__dynamic_cast',
}


def leb(data, i):
    result = shift = 0
    while True:
        byte = data[i]
        i += 1
        result |= (byte & 0x7F) << shift
        shift += 7
        if byte < 0x80:
            return result, i


def function_sizes(path):
    data = open(path, 'rb').read()
    if data[:4] != b'\0asm':
        raise SystemExit(f'{path}: not a wasm binary')
    i, names, imported, code = 8, {}, 0, None
    global DATA
    DATA = b''
    while i < len(data):
        sid = data[i]
        size, i = leb(data, i + 1)
        body = data[i:i + size]
        if sid == 2:  # imports: count the imported functions (they come first in the index space)
            j = 0
            n, j = leb(body, j)
            for _ in range(n):
                for _ in range(2):
                    length, j = leb(body, j)
                    j += length
                kind = body[j]
                j += 1
                if kind == 0:
                    _, j = leb(body, j)
                    imported += 1
                elif kind == 1:
                    j += 1
                    flags, j = leb(body, j)
                    _, j = leb(body, j)
                    if flags & 1:
                        _, j = leb(body, j)
                elif kind == 2:
                    flags, j = leb(body, j)
                    _, j = leb(body, j)
                    if flags & 1:
                        _, j = leb(body, j)
                elif kind == 3:
                    j += 2
                elif kind == 4:
                    j += 1
                    _, j = leb(body, j)
                else:
                    raise SystemExit(f'{path}: unknown import kind {kind}')
        elif sid == 10:
            code = (i, size)
        elif sid == 11:
            DATA = body
        elif sid == 0:
            j = 0
            length, j = leb(body, j)
            if body[j:j + length] == b'name':
                j += length
                while j < len(body):
                    sub = body[j]
                    sub_len, j = leb(body, j + 1)
                    end = j + sub_len
                    if sub == 1:
                        n, j = leb(body, j)
                        for _ in range(n):
                            index, j = leb(body, j)
                            length, j = leb(body, j)
                            names[index] = body[j:j + length].decode('utf8', 'replace')
                            j += length
                    j = end
        i += size
    if code is None:
        raise SystemExit(f'{path}: no code section')
    j = code[0]
    n, j = leb(data, j)
    sizes = []
    for k in range(n):
        size, j = leb(data, j)
        sizes.append((size, names.get(imported + k, f'?{k}')))
        j += size
    if not names:
        print('warning: no name section (link with --profiling-funcs)', file=sys.stderr)
    demangled = subprocess.run(['c++filt'], input='\n'.join(name for _, name in sizes),
                               capture_output=True, text=True, check=True).stdout.split('\n')
    return [(size, demangled[k]) for k, (size, _) in enumerate(sizes)]


def main():
    if len(sys.argv) < 2:
        raise SystemExit(__doc__)
    sizes = function_sizes(sys.argv[1])
    print(f'code: {sum(s for s, _ in sizes)} bytes in {len(sizes)} functions')
    for label, pattern in PATTERNS.items():
        hits = [(s, n) for s, n in sizes if re.search(pattern, n)]
        print(f'{label:20s} {sum(s for s, _ in hits):8d} bytes in {len(hits):4d} functions')
    # RTTI type names are data: mangled names of kiln types ("N4kiln10ShapeErrorE").
    names = [s for s in re.findall(rb'[\x20-\x7e]{6,}', DATA)
             if re.fullmatch(rb'(N|S[a-z])?[0-9A-Za-z_]*kiln[0-9A-Za-z_]*', s) and re.match(rb'N?\d', s)]
    print(f'{"kiln type names":20s} {sum(len(s) + 1 for s in names):8d} bytes in {len(names):4d} strings (data)')
    if len(sys.argv) > 2:
        with open(sys.argv[2], 'w') as out:
            for size, name in sizes:
                out.write(f'{size}\t{name}\n')


if __name__ == '__main__':
    main()
