"""WAV reading for the script tests (tests/cli, tests/scipy): NumPy only."""
import struct

import numpy as np

_PCM_GUID_TAIL = b"\x00\x00\x00\x00\x10\x00\x80\x00\x00\xaa\x00\x38\x9b\x71"


def read_wav(path):
    """Tiny RIFF/WAVE reader: PCM 16/24/32, IEEE float 32/64, WAVE_FORMAT_EXTENSIBLE.
    Returns (rate, kind, data) with data shaped (frames, channels): int16/int32
    samples for PCM ('pcmN'), float32/float64 for float ('float'/'double')."""
    raw = open(path, "rb").read()
    if raw[:4] not in (b"RIFF", b"RF64") or raw[8:12] != b"WAVE":
        raise AssertionError("%s is not a RIFF/WAVE file" % path)
    pos, fmt, data = 12, None, None
    while pos + 8 <= len(raw):
        cid, size = raw[pos:pos + 4], struct.unpack("<I", raw[pos + 4:pos + 8])[0]
        body = raw[pos + 8:pos + 8 + size]
        if cid == b"fmt ":
            fmt = body
        elif cid == b"data":
            data = body
        pos += 8 + size + (size & 1)
    if fmt is None or data is None:
        raise AssertionError("%s: no fmt or data chunk" % path)
    tag, channels, rate, _, align, bits = struct.unpack("<HHIIHH", fmt[:16])
    if tag == 0xFFFE:
        sub = fmt[24:40]
        if sub[2:] != _PCM_GUID_TAIL:
            raise AssertionError("%s: unknown extensible subformat %r" % (path, sub))
        tag = struct.unpack("<H", sub[:2])[0]
    n = len(data) // align
    data = data[:n * align]
    if tag == 3 and bits == 32:
        return rate, "float", np.frombuffer(data, "<f4").reshape(n, channels)
    if tag == 3 and bits == 64:
        return rate, "double", np.frombuffer(data, "<f8").reshape(n, channels)
    if tag == 1 and bits == 16:
        return rate, "pcm16", np.frombuffer(data, "<i2").reshape(n, channels)
    if tag == 1 and bits == 24:
        b = np.frombuffer(data, np.uint8).reshape(n * channels, 3).astype(np.int32)
        v = b[:, 0] | (b[:, 1] << 8) | (b[:, 2] << 16)
        v = np.where(v >= 1 << 23, v - (1 << 24), v)
        return rate, "pcm24", v.reshape(n, channels)
    if tag == 1 and bits == 32:
        return rate, "pcm32", np.frombuffer(data, "<i4").reshape(n, channels)
    raise AssertionError("%s: unsupported WAV format tag %d, %d bits" % (path, tag, bits))


def read_float_wav(path):
    """A float WAV's samples (what `format: float` writes) as float64, [frames][channels]."""
    _, kind, data = read_wav(path)
    assert kind == "float", f"{path}: {kind}, not a float WAV"
    return data.astype(np.float64)
