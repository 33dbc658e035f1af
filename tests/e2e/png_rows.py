"""The rows of an 8-bit RGB PNG such as `trainer plot` writes, with plain python3: the
chunks read, the pixels inflated through zlib and every row's filter undone (0 none, 1 sub,
2 up, 3 average, 4 paeth). Used by the e2e tests that look at a plot's pixels."""
import struct
import zlib


def rgb_rows(path):
    """(width, height, rows): each row a bytearray of width * 3 bytes."""
    data = open(path, "rb").read()
    pos, idat, width, height = 8, b"", 0, 0
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        if kind == b"IHDR":
            width, height = struct.unpack(">II", data[pos + 8:pos + 16])
        if kind == b"IDAT":
            idat += data[pos + 8:pos + 8 + length]
        pos += 12 + length
    raw, stride = zlib.decompress(idat), 1 + width * 3
    rows, previous = [], bytearray(width * 3)
    for y in range(height):
        kind, line = raw[y * stride], bytearray(raw[y * stride + 1:(y + 1) * stride])
        unfilter(kind, line, previous)
        rows.append(line)
        previous = line
    return width, height, rows


def unfilter(kind, line, previous):
    """Undoes one row's filter in place. Each filter its own loop, not one loop computing
    all five predictors for every byte: a 1000 x 800 plot then reads in a third of the
    time (the plot test reads seven)."""
    if kind == 1:
        for i in range(3, len(line)):
            line[i] = (line[i] + line[i - 3]) & 255
    elif kind == 2:
        line[:] = bytes((x + b) & 255 for x, b in zip(line, previous))
    elif kind == 3:
        for i in range(len(line)):
            a = line[i - 3] if i >= 3 else 0
            line[i] = (line[i] + (a + previous[i]) // 2) & 255
    elif kind == 4:
        for i in range(len(line)):
            a = line[i - 3] if i >= 3 else 0
            b, c = previous[i], previous[i - 3] if i >= 3 else 0
            p = a + b - c
            pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
            line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
