#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Write seed inputs for api_fuzz: call sequences that mostly succeed.

Random bytes mostly hit argument checks; these seeds open files and then
write, read, sync and use pages with valid arguments (and some bad ones),
so the fuzzer starts from the deep paths.  The encoding is the one
tests/fuzz/api_fuzz.c decodes; keep the two in step.

    tests/fuzz/gen-corpus.py OUTDIR [COUNT] [SEED]
"""
import os
import random
import struct
import sys

OPEN, CLOSE, PWRITE, PREAD, FSYNC, FDATASYNC, SYNC = 0, 1, 2, 4, 5, 6, 7
PAGE_GET, PAGE_WRITE, PAGE_PUT, PAGE_CHECK, MISC = 8, 9, 10, 11, 12


def u16(v):
    return struct.pack("<H", v & 0xFFFF)


def u32(v):
    return struct.pack("<I", v & 0xFFFFFFFF)


def file_byte(r):
    # mostly an open slot; now and then NULL, closed or foreign
    return r.choice([0, 1, 2, 3] * 6 + [5 << 2, 6 << 2, 7 << 2, 0x80 | 7 << 2])


def op_open(r):
    k = 3 << 2                      # small ino, page offset, length
    return bytes([OPEN, k, r.randrange(8), r.randrange(256)]) + \
        u32(r.randrange(1, 24 * 4096))


def op_rw(r, op):
    out = bytes([op, file_byte(r), 5])   # offset: random within the file
    out += u32(r.randrange(1 << 32))
    if r.random() < 0.2:
        out += bytes([4]) + u16(r.randrange(1 << 16))   # 3-5 pages
    else:
        out += bytes([5]) + u16(r.randrange(1 << 16))   # 1 B - 8 KiB
    if op == PWRITE:
        out += u16(r.randrange(1, 0x5a))
    else:
        out += bytes([0])
    return out


def op_page_get(r):
    flags = r.choice([0, 1, 4, 4, 5, 5, 2, 6])
    k = flags | 2 << 4               # index: random within the file
    return bytes([PAGE_GET, k, file_byte(r)]) + u16(r.randrange(1 << 16))


def op_page_write(r):
    return bytes([PAGE_WRITE, r.randrange(4)]) + u16(r.randrange(4096)) + \
        u16(r.randrange(4097)) + u16(r.randrange(1 << 16))


def program(r):
    out = b""
    for _ in range(r.randrange(1, 4)):
        out += op_open(r)
    for _ in range(r.randrange(4, 24)):
        x = r.random()
        if x < 0.30:
            out += op_rw(r, PWRITE)
        elif x < 0.45:
            out += op_rw(r, PREAD)
        elif x < 0.60:
            out += op_page_get(r)
        elif x < 0.70:
            out += op_page_write(r)
        elif x < 0.75:
            out += bytes([PAGE_PUT, r.randrange(256)])
        elif x < 0.78:
            out += bytes([PAGE_CHECK, r.randrange(4)])
        elif x < 0.84:
            out += bytes([r.choice([FSYNC, FDATASYNC]), file_byte(r)])
        elif x < 0.87:
            out += bytes([SYNC, r.randrange(8)])
        elif x < 0.92:
            out += bytes([CLOSE, file_byte(r)])
        elif x < 0.96:
            out += op_open(r)
        else:
            out += bytes([MISC, r.randrange(256), r.randrange(256)]) + \
                u32(r.randrange(1 << 32))
    return out


def main():
    outdir = sys.argv[1]
    count = int(sys.argv[2]) if len(sys.argv) > 2 else 40
    r = random.Random(int(sys.argv[3]) if len(sys.argv) > 3 else 1)
    os.makedirs(outdir, exist_ok=True)
    for i in range(count):
        with open(os.path.join(outdir, "seed-%03d" % i), "wb") as f:
            f.write(program(r))


if __name__ == "__main__":
    main()
