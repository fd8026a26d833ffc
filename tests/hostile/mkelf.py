#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""ELF files a hostile user could leave where root's symbolizer reads, for
tests/hostile.bats: small on disk, each asking for far more than it holds.

usage: mkelf.py names N LEN OUT   N function symbols all named by one LEN-byte name
       mkelf.py plt SIZE OUT      PLT relocations whose symbols' name table
                                  claims SIZE bytes (a sparse file)
       mkelf.py cfi N OUT         one function whose call-frame information
                                  changes N times, a byte apart
"""
import struct
import sys

EHDR, PHDR, SHDR, SYM, RELA = 64, 56, 64, 24, 24
TEXT = 0x1000  # file offset and address of the code: one page, all ret


def elf(sections, extra=0):
    """An x86-64 ET_DYN with one executable PT_LOAD over [TEXT, TEXT + 4096)
    and the given sections: (name, type, flags, data or (offset, size),
    link, info, entsize, align). Returns the bytes; sections whose data is a
    size lie past the end, in a hole the caller makes with truncate."""
    names = b"\0" + b"".join(s[0].encode() + b"\0" for s in sections) + b".shstrtab\0"
    body = bytearray(TEXT) + b"\xc3" * 4096
    headers = []
    for name, typ, flags, data, link, info, entsize, align in sections:
        if isinstance(data, tuple):
            off, size = data
        else:
            while len(body) % 8:
                body += b"\0"
            blob = data(len(body)) if callable(data) else data
            off, size = len(body), len(blob)
            body += blob
        headers.append((names.index(name.encode() + b"\0"), typ, flags, off, size, link, info,
                        entsize, align))
    shstr_off = len(body)
    body += names
    while len(body) % 8:
        body += b"\0"
    shoff = len(body)
    shdrs = bytearray(SHDR)  # the null section
    for n, typ, flags, off, size, link, info, entsize, align in headers:
        addr = off if flags & 2 else 0  # the one segment maps the file where it lies
        shdrs += struct.pack("<IIQQQQIIQQ", n, typ, flags, addr, off, size, link, info, align,
                             entsize)
    shdrs += struct.pack("<IIQQQQIIQQ", names.index(b".shstrtab\0"), 3, 0, 0, shstr_off,
                         len(names), 0, 0, 1, 0)
    body += shdrs
    nsec = len(headers) + 2
    ehdr = struct.pack("<16sHHIQQQIHHHHHH", b"\x7fELF\x02\x01\x01" + b"\0" * 9, 3, 62, 1,
                       TEXT, EHDR, shoff, 0, EHDR, PHDR, 1, SHDR, nsec, nsec - 1)
    phdr = struct.pack("<IIQQQQQQ", 1, 5, 0, 0, 0, shoff, shoff, 4096)
    body[0:EHDR + PHDR] = ehdr + phdr
    return bytes(body)


def names(n, length, out):
    """N symbols over the code, all with st_name 1: one name of LENGTH bytes."""
    strtab = b"\0" + b"A" * length + b"\0"
    syms = bytearray(SYM)
    for i in range(n):
        syms += struct.pack("<IBBHQQ", 1, 0x12, 0, 1, TEXT + (i % 4096), 1)
    data = elf([(".text", 1, 6, b"\xc3" * 16, 0, 0, 0, 16),
                (".strtab", 3, 0, strtab, 0, 0, 0, 1),
                (".symtab", 2, 0, bytes(syms), 2, 1, SYM, 8)])
    open(out, "wb").write(data)


def plt(size, out):
    """.rela.plt naming .dynsym's symbols, whose string table claims SIZE bytes."""
    dynsym = bytearray(SYM) + struct.pack("<IBBHQQ", 1, 0x12, 0, 0, 0, 0)
    rela = struct.pack("<QQq", TEXT + 8, 1 << 32 | 7, 0)
    end = 1 << 20
    data = elf([(".text", 1, 6, b"\xc3" * 16, 0, 0, 0, 16),
                (".plt", 1, 6, b"\xc3" * 32, 0, 0, 16, 16),
                (".dynstr", 3, 2, (end, size), 0, 0, 0, 1),
                (".dynsym", 11, 2, bytes(dynsym), 3, 1, SYM, 8),
                (".rela.plt", 4, 2, rela, 4, 2, RELA, 8)])
    open(out, "wb").write(data)


def uleb(v):
    out = bytearray()
    while True:
        b, v = v & 0x7f, v >> 7
        out.append(b | (0x80 if v else 0))
        if not v:
            return bytes(out)


def cfi(n, out):
    """.eh_frame with one FDE over the code whose rule changes at each of N bytes,
    and the .eh_frame_hdr that indexes it."""
    cie = struct.pack("<I", 0) + b"\x01zR\0" + uleb(1) + b"\x78" + uleb(16) + uleb(1) + b"\x1b"
    cie += b"\x0c\x07\x08\x90\x01"  # CFA = rsp + 8, return address at CFA - 8
    while (len(cie) + 4) % 8:
        cie += b"\0"
    ops = bytearray()
    for i in range(n):  # one byte on, the CFA offset 8 or 16 in turn
        ops += b"\x41\x0e" + uleb(16 if i % 2 == 0 else 8)
    eh_off = [0]

    def eh_frame(off):
        eh_off[0] = off
        fde_at = 4 + len(cie)
        body = struct.pack("<i", fde_at + 4)  # CIE pointer: back to the CIE
        pc_field = off + fde_at + 8
        body += struct.pack("<ii", TEXT - pc_field, n + 16) + uleb(0) + ops
        while (len(body) + 4) % 8:
            body += b"\0"
        return (struct.pack("<I", len(cie)) + cie + struct.pack("<I", len(body)) + body +
                struct.pack("<I", 0))

    def hdr(off):
        fde = eh_off[0] + 4 + len(cie)
        return (b"\x01\x1b\x03\x3b" + struct.pack("<i", eh_off[0] - (off + 4)) +
                struct.pack("<I", 1) + struct.pack("<ii", TEXT - off, fde - off))

    data = elf([(".text", 1, 6, b"\xc3" * 16, 0, 0, 0, 16),
                (".eh_frame", 1, 2, eh_frame, 0, 0, 0, 8),
                (".eh_frame_hdr", 1, 2, hdr, 0, 0, 0, 4)])
    open(out, "wb").write(data)


if __name__ == "__main__":
    if sys.argv[1] == "names" and len(sys.argv) == 5:
        names(int(sys.argv[2]), int(sys.argv[3]), sys.argv[4])
    elif sys.argv[1] == "plt" and len(sys.argv) == 4:
        plt(int(sys.argv[2]), sys.argv[3])
    elif sys.argv[1] == "cfi" and len(sys.argv) == 4:
        cfi(int(sys.argv[2]), sys.argv[3])
    else:
        sys.exit(__doc__)
