"""sigstream.run / sigstream.batch: the CLI's pipelines from Python, statistics as dicts, errors as exceptions."""

from __future__ import annotations

import os
import re
import subprocess
import wave
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import sigstream
from conftest import REPO, cli_path


def synth_config(tmp_path: Path, **extra: Any) -> dict[str, Any]:
    cfg: dict[str, Any] = {
        "version": 1,
        "source": {"synth": {"sample_rate": 16000, "duration_s": 0.5, "channels": 2,
                             "tones": [{"freq_hz": 50, "amplitude": 0.5}, {"freq_hz": 7000, "amplitude": 0.5}]}},
        "stages": [
            {"type": "metrics", "name": "input"},
            {"type": "fir", "name": "lp", "design": {"kind": "lowpass", "cutoff_hz": 1000, "taps": 255}, "mode": "same"},
            {"type": "metrics", "name": "after_lp"},
        ],
        "sink": {"file": str(tmp_path / "out.wav"), "format": "float"},
        "execution": {"backend": "cpu", "chunk_frames": 4097},
    }
    cfg.update(extra)
    return cfg


def write_wav(path: Path, x: np.ndarray, rate: int = 16000) -> None:
    """16-bit PCM WAV with the standard library (frames x channels)."""
    pcm = np.clip(np.round(x * 32767), -32768, 32767).astype("<i2")
    with wave.open(str(path), "wb") as w:
        w.setnchannels(x.shape[1])
        w.setsampwidth(2)
        w.setframerate(rate)
        w.writeframes(pcm.tobytes())


def test_run_dict_returns_the_statistics(tmp_path: Path) -> None:
    stats = sigstream.run(synth_config(tmp_path), quiet=True)
    assert stats["schema"] == 1 and stats["sigstream_version"] == sigstream.__version__
    assert stats["input"]["frames"] == 8000 and stats["output"]["frames"] == 8000
    before = stats["metrics"]["input"]["totals"]["channels"][0]["energy"]
    after = stats["metrics"]["after_lp"]["totals"]["channels"][0]["energy"]
    # The 7 kHz tone (half the energy) is removed, the 50 Hz one kept.
    assert 0.45 < after / before < 0.55
    assert (tmp_path / "out.wav").exists()


def test_run_path_with_overrides_and_verify(tmp_path: Path) -> None:
    import json

    cfg = tmp_path / "c.yaml"
    cfg.write_text(json.dumps(synth_config(tmp_path)))
    stats = sigstream.run(cfg, overrides=["execution.chunk_frames=1000", "stages.1.design.taps=63"], verify=True,
                          quiet=True)
    assert stats["execution"]["chunk_frames"] == 1000
    assert stats["stages"][1]["taps"] == 63
    assert stats["verification"]["passed"] is True


def test_run_messages_go_to_stderr_unless_quiet(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    sigstream.run(synth_config(tmp_path))
    assert "sigstream:" in capsys.readouterr().err
    sigstream.run(synth_config(tmp_path), quiet=True)
    assert capsys.readouterr().err == ""


def test_config_errors_carry_the_cli_message(tmp_path: Path) -> None:
    cfg = synth_config(tmp_path)
    cfg["stages"][1]["mdoe"] = "same"
    with pytest.raises(sigstream.ConfigError, match=r"did you mean 'mode'"):
        sigstream.run(cfg)
    with pytest.raises(sigstream.ConfigError):
        sigstream.run(synth_config(tmp_path), overrides=["execution.chunk_frames=0"])
    with pytest.raises(ValueError):  # ConfigError is a ValueError
        sigstream.run(synth_config(tmp_path), overrides=["nonsense"])
    with pytest.raises(sigstream.ConfigError, match="plain data"):
        sigstream.run({"version": 1, "source": {"file": object()}})


def test_input_errors(tmp_path: Path) -> None:
    cfg = synth_config(tmp_path)
    cfg["source"] = {"file": str(tmp_path / "missing.wav")}
    with pytest.raises(sigstream.InputError, match="missing.wav"):
        sigstream.run(cfg, quiet=True)
    with pytest.raises(OSError):  # InputError is an OSError
        sigstream.run(tmp_path / "no-such-config.yaml")


def test_run_the_shipped_demo_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    stats = sigstream.run(REPO / "configs" / "demo.yaml", overrides=["execution.backend=cpu"], quiet=True)
    assert stats["output"]["frames"] == 160000
    assert (tmp_path / "out" / "demo.wav").exists()


def test_batch_returns_the_summary(tmp_path: Path, rng: np.random.Generator) -> None:
    for i in range(3):
        write_wav(tmp_path / f"in{i}.wav", rng.uniform(-0.5, 0.5, (1601 + i, 2)))
    (tmp_path / "bad.wav").write_bytes(b"not a wav file")
    cfg = synth_config(tmp_path)
    del cfg["source"]
    cfg["sink"] = {"file": "placeholder.wav", "format": "pcm16"}
    summary = sigstream.batch(cfg, inputs=[tmp_path / "in*.wav", tmp_path / "bad.wav"], out_dir=tmp_path / "out",
                              quiet=True)
    statuses = {Path(f["file"]).name: f["status"] for f in summary["files"]}
    assert statuses == {"in0.wav": "ok", "in1.wav": "ok", "in2.wav": "ok", "bad.wav": "failed"}
    assert summary["exit_code"] == 1
    assert (tmp_path / "out" / "in1.wav").exists()


def test_batch_of_a_name_that_is_not_utf8(tmp_path: Path, rng: np.random.Generator,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    """A Latin-1 file name: processed, logged and named with U+FFFD for its odd byte (the log line
    raised UnicodeDecodeError in a worker thread, which ended the interpreter), found up to date again."""
    (tmp_path / "in").mkdir()
    write_wav(tmp_path / "in" / "plain.wav", rng.uniform(-0.5, 0.5, (1301, 2)))
    write_wav(tmp_path / "in" / "x.wav", rng.uniform(-0.5, 0.5, (977, 1)))
    os.rename(tmp_path / "in" / "x.wav", os.path.join(os.fsencode(tmp_path / "in"), b"caf\xe9.wav"))
    cfg = synth_config(tmp_path)
    del cfg["source"]
    cfg["sink"] = {"file": "placeholder.wav", "format": "pcm16"}
    summary = sigstream.batch(cfg, tmp_path / "in", tmp_path / "out", backend="cpu")
    assert summary["counts"]["ok"] == 2 and summary["exit_code"] == 0
    assert sorted(Path(f["file"]).name for f in summary["files"]) == ["caf\ufffd.wav", "plain.wav"]
    assert os.path.exists(os.path.join(os.fsencode(tmp_path / "out"), b"caf\xe9.wav"))
    assert "caf\ufffd.wav" in capsys.readouterr().err
    again = sigstream.batch(cfg, tmp_path / "in", tmp_path / "out", backend="cpu", quiet=True)
    assert again["counts"]["skipped"] == 2


def test_paths_and_messages_with_a_name_that_is_not_utf8(tmp_path: Path, rng: np.random.Generator) -> None:
    """A str path that is not UTF-8 (Python spells its odd bytes as surrogates) is a ConfigError naming it
    (it was TypeError: incompatible function arguments); an error about such a file keeps its message (it lost
    all of it: PyErr_SetString decodes strictly)."""
    (tmp_path / "in").mkdir()
    (tmp_path / "in2").mkdir()
    write_wav(tmp_path / "in" / "x.wav", rng.uniform(-0.5, 0.5, (977, 1)))
    latin1 = os.path.join(os.fsencode(tmp_path / "in"), b"caf\xe9.wav")
    os.rename(tmp_path / "in" / "x.wav", latin1)
    os.link(latin1, os.path.join(os.fsencode(tmp_path / "in2"), b"caf\xe9.WAV"))
    cfg = synth_config(tmp_path)
    del cfg["source"]
    cfg["sink"] = {"file": "placeholder.wav", "format": "pcm16"}
    with pytest.raises(sigstream.ConfigError, match="caf\ufffd.wav' is not a UTF-8 name"):
        sigstream.batch(cfg, os.fsdecode(latin1), tmp_path / "out", quiet=True)
    with pytest.raises(sigstream.ConfigError, match="(?s)outputs collide:.*caf\ufffd.WAV"):
        sigstream.batch(cfg, [tmp_path / "in", tmp_path / "in2"], tmp_path / "out", quiet=True)


def test_batch_takes_specs_order_and_a_single_path(tmp_path: Path, rng: np.random.Generator) -> None:
    """SPEC §10: batch(config, inputs, out_dir, client, backend, force); a single input or override
    given as a string is one item (it was split into characters: inputs 'i', 'n', ...)."""
    (tmp_path / "in").mkdir()
    for i in range(2):
        write_wav(tmp_path / "in" / f"f{i}.wav", rng.uniform(-0.5, 0.5, (1203 + i, 1)))
    cfg = synth_config(tmp_path)
    del cfg["source"]
    cfg["sink"] = {"file": "placeholder.wav", "format": "pcm16"}
    summary = sigstream.batch(cfg, str(tmp_path / "in"), tmp_path / "out", None, "cpu", False, quiet=True,
                              overrides="sink.format=pcm24")
    assert summary["counts"]["ok"] == 2 and summary["exit_code"] == 0
    with wave.open(str(tmp_path / "out" / "f1.wav")) as w:
        assert w.getsampwidth() == 3  # the override, taken whole
    again = sigstream.batch(cfg, tmp_path / "in" / "f0.wav", tmp_path / "out", quiet=True, overrides="sink.format=pcm24")
    assert again["counts"] == {**again["counts"], "total": 1, "skipped": 1}
    with pytest.raises(TypeError):
        sigstream.batch(cfg, [], tmp_path / "out", None, "cpu", False, True)  # keep_going: a keyword now
    with pytest.raises(TypeError, match="pass overrides by name"):
        sigstream.batch(cfg, [], ["sink.format=pcm24"], tmp_path / "out")  # the old order


def test_version_equals_the_cli() -> None:
    text = (REPO / "CMakeLists.txt").read_text()
    m = re.search(r"project\(sigstream VERSION ([0-9.]+)", text)
    assert m is not None and sigstream.__version__ == m.group(1)
    cli = cli_path()
    if cli is not None:
        out = subprocess.run([cli, "--version"], capture_output=True, text=True, check=True).stdout
        assert sigstream.__version__ in out


def test_out_of_gpu_memory_is_a_cuda_error_and_a_memory_error() -> None:
    """ErrorKind::cuda_memory (core/error.hpp) maps to CudaMemoryError, which a
    CuPy or PyTorch user catches as MemoryError or as the CUDA failure it is."""
    from sigstream.errors import KINDS

    assert KINDS["cuda_memory"] is sigstream.CudaMemoryError
    assert issubclass(sigstream.CudaMemoryError, sigstream.CudaError)
    assert issubclass(sigstream.CudaMemoryError, MemoryError)
    assert not issubclass(sigstream.CudaError, MemoryError)
