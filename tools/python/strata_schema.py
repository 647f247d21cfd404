"""Strata input schemas in Python: the schema file syntax of include/strata/data/schema.h
(delimiter, header, one `column NAME ROLE [ARG]` line per column), the built-in Criteo layout,
and the reading of rows as field lists. Shared by tools/python/strata_torch.py and
tools/bench/torch_reference.py."""
import csv
import gzip
import math
import re
import sys

SEPARATORS = {"comma": ",", "tab": "\t", "semicolon": ";", "pipe": "|", "space": " ", "colon": ":"}
CRITEO_SCHEMA = ("delimiter tab\nheader no\ncolumn label label\n" +
                 "".join(f"column I{i} numeric log1p\n" for i in range(1, 14)) +
                 "".join(f"column C{i} categorical\n" for i in range(1, 27)))


SLOT_ROLES = ("categorical", "multihot", "bucketize", "time")


class Schema:
    """delimiter, header, columns [(name, role, argument)], label (its column index) and
    dense [(column index, log1p?)] in dense-feature order. A multihot column's argument is
    (separator, mean-pooled?). With widths (`width N` lines and column suffixes),
    unit_width is their greatest common divisor and units[i] the unit slots column i's
    slots each span (strata's slots of several widths); else unit_width is 0 and every
    unit is 1."""

    def __init__(self, text, source="schema"):
        self.delimiter, self.header, self.columns, widths, default = "\t", False, [], [], 0
        for lineno, line in enumerate(text.splitlines(), 1):
            body = line.split("#", 1)[0]
            words = body.split()
            if not words:
                continue
            if words[0] == "delimiter":
                self.delimiter = SEPARATORS.get(words[1], words[1])
            elif words[0] == "header":
                self.header = words[1] == "yes"
            elif words[0] == "width":
                default = int(words[1])
            elif words[0] == "column" and len(words) >= 3:
                width = 0
                if len(words) > 4 and words[-2] == "width":
                    width = int(words[-1])
                    body = body[:body.rstrip().rindex(words[-2])]
                    words = words[:-2]
                widths.append(width)
                arg = body.split(None, 3)[3].strip() if len(words) > 3 else ""
                if words[2] == "multihot":  # (separator, mean-pooled?)
                    parts = arg.split()
                    arg = (SEPARATORS.get(parts[0], parts[0]), len(parts) > 1 and parts[1] == "mean")
                self.columns.append((words[1], words[2], arg))
            else:
                sys.exit(f"{source}:{lineno}: not a schema line")
        widths = [w or default for w in widths]
        self.unit_width = math.gcd(*[w for w, (_, r, _) in zip(widths, self.columns) if r in SLOT_ROLES])
        self.units = [w // self.unit_width if self.unit_width else 1 for w in widths]
        roles = [r for _, r, _ in self.columns]
        if roles.count("label") != 1:
            sys.exit(f"{source}: a schema needs exactly one label column")
        self.label = roles.index("label")
        self.dense = [(i, arg == "log1p") for i, (_, r, arg) in enumerate(self.columns) if r == "numeric"]


def open_text(path):
    """The file's text; a UTF-8 byte order mark before its first line is dropped, as strata's
    reader drops it."""
    if path.endswith(".gz"):
        return gzip.open(path, "rt", encoding="utf-8-sig")
    return open(path, "rt", encoding="utf-8-sig")


LABEL = re.compile(r"[01](\.0*)?")  # 0 or 1, also as a decimal whose fraction is zeros, as strata reads it


def split_fields(line, delimiter):
    """A line's fields; a field in double quotes may hold the delimiter and loses the quotes
    (as strata's reader does)."""
    return next(csv.reader([line], delimiter=delimiter, quotechar='"'))


def read_rows(paths, schema):
    """All rows of the files as lists of field strings (header lines and blank lines dropped);
    exits with file:line on a row that has the wrong number of fields or a label other than 0/1."""
    width = len(schema.columns)
    rows = []
    for path in paths:
        try:
            with open_text(path) as f:
                lines = [line.rstrip("\r\n") for line in f]
        except OSError as e:
            sys.exit(f"cannot read {path}: {e.strerror or e}")
        for lineno, line in enumerate(lines, 1):
            if (schema.header and lineno == 1) or not line:
                continue
            fields = split_fields(line, schema.delimiter)
            if len(fields) != width or not LABEL.fullmatch(fields[schema.label]):
                sys.exit(f"{path}:{lineno}: expected a 0/1 label and {width - 1} other columns, "
                         f"got {len(fields)} fields")
            rows.append(fields)
    return rows
