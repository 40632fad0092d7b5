#!/usr/bin/env python3
"""h5py's side of the io.h5py tests (tests/io/CMakeLists.txt).

    h5py_interop.py write FILE   h5py writes the datasets test_io's IoH5py.Exchange reads (no Kyoyu attributes)
    h5py_interop.py check FILE   the file IoH5py.Exchange wrote: values, attributes, and the checksum
                                 recomputed with numpy from the formula in docs/io.md

Exits 77 (CTest's skip) with a message when h5py is not installed (Debian: python3-h5py)."""
import sys

try:
    import h5py
    import numpy as np
except ImportError as e:
    print(f"SKIP: h5py or numpy not installed ({e}); install python3-h5py to run the h5py interop tests")
    sys.exit(77)

M64 = (1 << 64) - 1


def val(g):
    return 0.5 + ((g * 2654435761) % 1000003)


def mix(z):
    """splitmix64's output function on uint64 numpy arrays (wrapping arithmetic)"""
    with np.errstate(over="ignore"):
        z = z + np.uint64(0x9E3779B97F4A7C15)
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        return z ^ (z >> np.uint64(31))


def checksum(data, elem_bytes):
    """docs/io.md: sum over elements i (row-major) and their 8-byte little-endian words w_j (the last zero
    padded) of mix(w_j ^ (i * 0x9E3779B97F4A7C15 + j * 0xD1B54A32D192ED03)), modulo 2^64."""
    raw = np.ascontiguousarray(data).view(np.uint8).reshape(-1, elem_bytes)
    n = raw.shape[0]
    words = (elem_bytes + 7) // 8
    pad = np.zeros((n, words * 8), dtype=np.uint8)
    pad[:, :elem_bytes] = raw
    w = pad.view("<u8").reshape(n, words)
    with np.errstate(over="ignore"):
        key = np.arange(n, dtype=np.uint64) * np.uint64(0x9E3779B97F4A7C15)
    total = 0
    with np.errstate(over="ignore"):
        for j in range(words):
            h = mix(w[:, j] ^ (key + np.uint64(j) * np.uint64(0xD1B54A32D192ED03)))
            total = (total + int(h.sum(dtype=np.uint64))) & M64
    return total


def write(path):
    with h5py.File(path, "w") as f:
        f["temps"] = np.array([val(g) for g in range(66)], dtype=np.float64).reshape(11, 6)
        # chunked and compressed: no single extent, so the raw path reads it through HDF5
        f.create_dataset("temps_z", data=f["temps"][...], chunks=(4, 3), compression="gzip")
        f["ids"] = np.arange(50, dtype=np.uint64) * 3 + 1
        f["vel"] = (np.arange(150, dtype=np.float32) * 0.5).reshape(50, 3)
    print("h5py wrote", path)


def check(path):
    bad = []
    with h5py.File(path, "r") as f:
        d = f["field"]
        want = np.array([val(g) for g in range(36)], dtype=np.float64).reshape(9, 4)
        if d.shape != (9, 4) or d.dtype != np.float64 or not np.array_equal(d[...], want):
            bad.append(f"field: shape {d.shape} dtype {d.dtype} or values differ")
        a = dict(d.attrs)
        units = a.get("units", b"")
        units = units.decode() if isinstance(units, bytes) else str(units)
        if units != "m":
            bad.append(f"field: units {a.get('units')!r}")
        if list(a.get("shape", [])) != [9, 4]:
            bad.append(f"field: shape attribute {a.get('shape')}")
        if int(a["kyoyu_checksum"][0]) != checksum(d[...], 8):
            bad.append(f"field: checksum 0x{int(a['kyoyu_checksum'][0]):016x}, numpy 0x{checksum(d[...], 8):016x}")
        p = f["pm"]
        wantp = (np.arange(29 * 4, dtype=np.float32) * 0.25).reshape(29, 4)
        if p.shape != (29, 4) or p.dtype != np.float32 or not np.array_equal(p[...], wantp):
            bad.append(f"pm: shape {p.shape} dtype {p.dtype} or values differ")
        if int(p.attrs["components"][0]) != 4:
            bad.append("pm: components attribute")
        if int(p.attrs["kyoyu_checksum"][0]) != checksum(p[...], 16):
            bad.append("pm: checksum differs from numpy's")
        if int(f.attrs.get("kyoyu_complete", 0)) != 1:
            bad.append("file not marked complete")
    if bad:
        print("H5PY CHECK FAILED:", "; ".join(bad))
        sys.exit(1)
    print("H5PY CHECK OK:", path)


if __name__ == "__main__":
    {"write": write, "check": check}[sys.argv[1]](sys.argv[2])
