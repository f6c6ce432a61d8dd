#!/usr/bin/env python3
"""Writes the single-byte code page tables of crates/codepage/src/tables/.

The tables come from Python's codecs: the standard library where it has the page, and the
`ebcdic` package (PyPI) for the EBCDIC pages it lacks. Run it in a throwaway virtual
environment; the build uses only the Rust files it writes:

    python3 -m venv /tmp/venv && /tmp/venv/bin/pip install ebcdic
    /tmp/venv/bin/python scripts/gen_codepage_tables.py

Rules applied on top of the references (each is checked, so a changed reference fails here):

- EBCDIC control characters are those of IBM's CDRA tables, as the standard library's cp037
  has them: 0x15 is NL (U+0085) and 0x25 is LF (U+000A). The `ebcdic` package maps 0x15 to
  LF as well (two bytes for one character, so LF could not round-trip), and its cp1047 swaps
  the two as z/OS UNIX does; both are put back to the CDRA mapping. No other control may
  differ from cp037's.
- 1140-1149 are their base page (37, 273, 277, 278, 280, 284, 285, 297, 500, 871) with the
  euro sign in place of the currency sign; the references are checked against that.
- A byte a Windows page leaves undefined in 0x80-0x9F stands for the C1 control of the same
  number (as Windows and the WHATWG decoders take it), so every byte survives a round trip.
  Other undefined bytes stay undefined: decoding them is an error.
"""

import codecs
import os
import sys

try:
    import ebcdic  # noqa: F401  (registers the extra EBCDIC codecs)
except ImportError:
    sys.exit("the `ebcdic` package is needed: pip install ebcdic (see the header of this script)")

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT_DIR = os.path.join(ROOT, "crates", "codepage", "src", "tables")
UNDEFINED = 0xFFFF

# (ccsid, codec, description); the codec name is looked up in the standard library first.
EBCDIC = [
    (37, "cp037", "EBCDIC US, Canada, Netherlands, Portugal, Brazil"),
    (273, "cp273", "EBCDIC Germany, Austria"),
    (277, "cp277", "EBCDIC Denmark, Norway"),
    (278, "cp278", "EBCDIC Finland, Sweden"),
    (280, "cp280", "EBCDIC Italy"),
    (284, "cp284", "EBCDIC Spain, Latin America"),
    (285, "cp285", "EBCDIC United Kingdom"),
    (297, "cp297", "EBCDIC France"),
    (500, "cp500", "EBCDIC International (Latin-1)"),
    (870, "cp870", "EBCDIC Latin-2 (Central Europe)"),
    (871, "cp871", "EBCDIC Iceland"),
    (1025, "cp1025", "EBCDIC Cyrillic"),
    (1026, "cp1026", "EBCDIC Turkish"),
    (1047, "cp1047", "EBCDIC Latin-1 Open Systems (z/OS)"),
]
EURO_BASE = {1140: 37, 1141: 273, 1142: 277, 1143: 278, 1144: 280, 1145: 284, 1146: 285,
             1147: 297, 1148: 500, 1149: 871}
# Where a euro page's reference differs from base + euro other than in the controls fixed
# below. 1141: the `ebcdic` package has the macron at 0xBC where the standard library's
# cp273 (the base) has the overline; the base wins so that 1141 is 273 plus the euro.
EURO_KNOWN_DIFFERENCES = {1141: {0xBC}}
ISO8859 = [
    (813, "iso8859_7", "ISO-8859-7 (Greek)"),
    (912, "iso8859_2", "ISO-8859-2 (Latin-2)"),
    (913, "iso8859_3", "ISO-8859-3 (Latin-3)"),
    (914, "iso8859_4", "ISO-8859-4 (Latin-4)"),
    (915, "iso8859_5", "ISO-8859-5 (Cyrillic)"),
    (916, "iso8859_8", "ISO-8859-8 (Hebrew)"),
    (920, "iso8859_9", "ISO-8859-9 (Latin-5, Turkish)"),
    (923, "iso8859_15", "ISO-8859-15 (Latin-9)"),
]
WINDOWS = [(c, f"cp{c}", f"Windows-{c}") for c in range(1250, 1259)]
DOS = [
    (437, "cp437", "IBM PC (DOS) US"),
    (850, "cp850", "DOS Latin-1"),
    (852, "cp852", "DOS Latin-2"),
    (855, "cp855", "DOS Cyrillic"),
    (857, "cp857", "DOS Turkish"),
    (858, "cp858", "DOS Latin-1 with euro"),
    (862, "cp862", "DOS Hebrew"),
    (866, "cp866", "DOS Cyrillic (Russian)"),
]


def decode_all(codec):
    """The 256 code points of a codec's bytes, UNDEFINED where it has none."""
    table = []
    for b in range(256):
        try:
            text = bytes([b]).decode(codec)
        except UnicodeDecodeError:
            table.append(UNDEFINED)
            continue
        if len(text) != 1:
            sys.exit(f"{codec}: byte {b:#04x} decodes to {len(text)} characters")
        table.append(ord(text))
    return table


def ebcdic_table(codec):
    table = decode_all(codec)
    reference = decode_all("cp037")
    table[0x15], table[0x25] = 0x85, 0x0A
    for b in list(range(0x40)) + [0xFF]:
        if table[b] != reference[b]:
            sys.exit(f"{codec}: control {b:#04x} is U+{table[b]:04X}, cp037 has U+{reference[b]:04X}")
    return table


def euro_table(ccsid, base):
    table = list(base)
    where = [b for b in range(256) if table[b] == 0xA4]
    if len(where) != 1:
        sys.exit(f"CCSID {ccsid}: the base page has the currency sign at {where}")
    table[where[0]] = 0x20AC
    reference = ebcdic_table(f"cp{ccsid}")
    differ = {b for b in range(256) if reference[b] != table[b]}
    if differ != EURO_KNOWN_DIFFERENCES.get(ccsid, set()):
        sys.exit(f"CCSID {ccsid}: the reference differs from base + euro at {sorted(differ)}")
    return table


def windows_table(codec):
    table = decode_all(codec)
    for b in range(0x80, 0xA0):
        if table[b] == UNDEFINED:
            table[b] = b
    return table


def check(ccsid, table):
    defined = [c for c in table if c != UNDEFINED]
    if len(defined) != len(set(defined)):
        sys.exit(f"CCSID {ccsid}: a character has two bytes")
    for c in defined:
        if c > 0xFFFF or 0xD800 <= c <= 0xDFFF:
            sys.exit(f"CCSID {ccsid}: U+{c:04X} is not a BMP scalar value")


def char_literal(c):
    if c == UNDEFINED:
        return "U"
    return f"'\\u{{{c:04X}}}'"


def rust_table(ccsid, description, codec_note, table):
    check(ccsid, table)
    lines = [
        f"/// CCSID {ccsid}: {description} ({codec_note}).",
        f"pub(crate) static CCSID_{ccsid}: SingleByteTable = SingleByteTable::new(",
        f"    {ccsid},",
        "    [",
    ]
    for row in range(0, 256, 8):
        lines.append("        " + " ".join(char_literal(c) + "," for c in table[row:row + 8]))
    lines.append("    ],")
    lines.append(");")
    return "\n".join(lines)


def source_of(codec):
    module = codecs.lookup(codec).encode.__module__ or ""
    return "ebcdic package" if module.startswith("ebcdic") else "Python standard library"


def write(name, family, tables):
    header = [
        f"//! {family}: generated by scripts/gen_codepage_tables.py; do not edit.",
        "//!",
        "//! Regenerate with `python3 -m venv /tmp/venv && /tmp/venv/bin/pip install ebcdic &&",
        "//! /tmp/venv/bin/python scripts/gen_codepage_tables.py`. The module is declared",
        "//! `#[rustfmt::skip]`: one table row per line is easier to check against a chart.",
        "",
        "use super::SingleByteTable;",
    ]
    if any("(U," in t or " U," in t for t in tables):
        header.append("use super::UNDEFINED as U;")
    header += ["", ""]
    path = os.path.join(OUT_DIR, name)
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n".join(header) + "\n\n".join(tables) + "\n")
    print(f"wrote {path}")


def main():
    ebcdic_tables = {}
    out = []
    for ccsid, codec, description in EBCDIC:
        table = ebcdic_table(codec)
        ebcdic_tables[ccsid] = table
        out.append(rust_table(ccsid, description, source_of(codec) + f" {codec}", table))
    for ccsid, base in EURO_BASE.items():
        table = euro_table(ccsid, ebcdic_tables[base])
        description = f"CCSID {base} with the euro sign"
        out.append(rust_table(ccsid, description, f"checked against cp{ccsid}", table))
    write("ebcdic.rs", "EBCDIC pages", out)

    out = []
    for ccsid, codec, description in ISO8859:
        out.append(rust_table(ccsid, description, source_of(codec) + f" {codec}", decode_all(codec)))
    write("iso8859.rs", "ISO-8859 pages", out)

    out = []
    for ccsid, codec, description in WINDOWS:
        out.append(rust_table(ccsid, description, source_of(codec) + f" {codec}", windows_table(codec)))
    write("windows.rs", "Windows pages", out)

    out = []
    for ccsid, codec, description in DOS:
        out.append(rust_table(ccsid, description, source_of(codec) + f" {codec}", decode_all(codec)))
    write("dos.rs", "DOS (IBM PC) pages", out)


if __name__ == "__main__":
    main()
