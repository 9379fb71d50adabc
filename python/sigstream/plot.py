"""Figures of a sigstream run (SPEC section 8), drawn from its statistics JSON.

    python3 -m sigstream.plot STATS.json [-o FIG.png|.svg|.pdf]
    sigstream plot STATS.json [-o FIG]              (the CLI runs this same file)

    >>> from sigstream.plot import make_figure
    >>> fig = make_figure("out/demo_stats.json")     # a matplotlib Figure

Panels, each with labelled axes and units (channel 0 of each signal):
  1. the source and the output over the same short excerpt (the JSON's
     `excerpt`: 40 ms from a quarter into the signal), in time;
  2. the spectrum (Welch PSD, dB) of every metrics block that has one;
  3. each FIR stage's magnitude response (dB) and, 4., its group delay (ms),
     and the resampler's (the JSON's stages[].response);
  5. per-chunk rms and peak (dBFS) of every metrics block over time.
A panel whose data the run did not record says what to add instead.

A batch summary (batch_summary.json) gets its own figure, one row per file
(failed, interrupted and not-run files marked as such in every panel):
  1. the output's rms and peak (dBFS, the loudest channel);
  2. its integrated loudness (LUFS) and true peak (dBTP), from the metrics
     stage with `loudness: true` (SPEC section 13); a file with no 400 ms
     block above the gates (integrated null: silent) is marked "silent";
  3. its clipped output samples.

This file depends on NumPy and matplotlib only (not on sigstream's compiled
module), so that the CLI can run it with any Python that has them. Exit
codes of main() (SPEC section 1's): 0 drawn, 1 an unreadable or bad
statistics file, 2 usage (a figure name without .png/.svg/.pdf), 3
matplotlib or NumPy missing (the CLI turns that into its install hint).
"""
from __future__ import annotations

import json
import math
import os
import sys
from typing import Any, Sequence

Stats = dict[str, Any]

# Levels at or below this are drawn at it (a silent chunk, an exact zero).
FLOOR_DB = -200.0


def load(stats: str | os.PathLike[str] | Stats) -> Stats:
    """The statistics as a dict: a path to the JSON, or the dict itself."""
    if isinstance(stats, dict):
        return stats
    with open(stats, encoding="utf-8") as f:
        data = json.load(f)
    if not isinstance(data, dict) or not (("metrics" in data and "stages" in data) or _is_batch(data)):
        raise ValueError(f"{os.fspath(stats)}: not a sigstream statistics file (no 'metrics' and 'stages', "
                         "nor a batch summary's 'files')")
    return data


def _is_batch(s: Stats) -> bool:
    return isinstance(s.get("files"), list) and "counts" in s


def _db(values: Sequence[float | None], power: bool) -> list[float]:
    """10 log10 (power) or 20 log10 (amplitude), floored at FLOOR_DB; None (JSON null) -> NaN."""
    k = 10.0 if power else 20.0
    return [math.nan if v is None else max(k * math.log10(v), FLOOR_DB) if v > 0 else FLOOR_DB for v in values]


def _note(ax: Any, text: str) -> None:
    ax.text(0.5, 0.5, text, ha="center", va="center", transform=ax.transAxes, fontsize=10, color="0.35", wrap=True)


def _waveforms(ax: Any, s: Stats) -> None:
    ax.set_title("Before and after: source and output over the same 40 ms")
    ax.set_xlabel("time (ms)")
    ax.set_ylabel("amplitude (full scale = 1)")
    e = s.get("excerpt")
    if not e:
        _note(ax, "no excerpt in these statistics (a signal that ends before 0.5 s of a stream records none)")
        return
    for key, label, style in (("source", "source (input)", "-"), ("output", "output", "-")):
        part = e[key]
        rate = float(part["sample_rate"])
        y = part["channels"][0]
        t = [(part["start_frame"] + i) / rate * 1000.0 for i in range(len(y))]
        ax.plot(t, y, style, label=label, linewidth=1.0 if key == "source" else 1.6)
    ax.legend(loc="upper right", fontsize=9)
    ax.grid(True, alpha=0.3)


def _spectra(ax: Any, s: Stats) -> None:
    ax.set_title("Spectra of the metrics blocks (Welch PSD, channel 0)")
    ax.set_xlabel("frequency (Hz)")
    ax.set_ylabel("PSD (dB re 1/Hz, full scale = 1)")
    drawn = 0
    for name, block in s["metrics"].items():
        sp = block.get("spectrum")
        if not sp or sp.get("psd") is None:
            continue
        ax.plot(sp["freq_hz"], _db(sp["psd"][0], power=True), label=f"{name} (nfft {sp['nfft']})", linewidth=1.2)
        drawn += 1
    if drawn:
        ax.legend(loc="upper right", fontsize=9)
        ax.grid(True, alpha=0.3)
    else:
        _note(ax, "no metrics block has a spectrum: add `spectrum: {}` to a metrics stage")


def _filter_stages(s: Stats) -> list[Stats]:
    return [st for st in s["stages"] if st.get("response")]


def _magnitude(ax: Any, s: Stats) -> None:
    ax.set_title("Filter magnitude response")
    ax.set_xlabel("frequency (Hz)")
    ax.set_ylabel("magnitude (dB)")
    stages = _filter_stages(s)
    for st in stages:
        r = st["response"]
        ax.plot(r["freq_hz"], [max(v, FLOOR_DB) for v in r["magnitude_db"]], label=f"{st['name']} ({st['type']})")
    if stages:
        ax.set_ylim(bottom=max(FLOOR_DB, min(min(st["response"]["magnitude_db"]) for st in stages) - 5))
    _finish_response(ax, stages, "lower left")


def _group_delay(ax: Any, s: Stats) -> None:
    ax.set_title("Filter group delay")
    ax.set_xlabel("frequency (Hz)")
    ax.set_ylabel("group delay (ms)")
    stages = _filter_stages(s)
    for st in stages:
        r = st["response"]
        gd = [math.nan if v is None else v for v in r["group_delay_ms"]]
        ax.plot(r["freq_hz"], gd, label=f"{st['name']} ({st['type']})")
    if stages:
        # From 0 to well above the largest typical delay: a linear-phase
        # filter's flat line reads as flat, not as rounding noise magnified.
        typical = [sorted(v for v in st["response"]["group_delay_ms"] if v is not None) for st in stages]
        top = max((t[len(t) // 2] for t in typical if t), default=1.0)
        ax.set_ylim(0.0, 1.5 * top if top > 0 else 1.0)
    _finish_response(ax, stages, "upper right")


def _finish_response(ax: Any, stages: list[Stats], legend: str) -> None:
    """A response panel's legend and grid, or a note that there is nothing to draw."""
    if stages:
        ax.legend(loc=legend, fontsize=9)
        ax.grid(True, alpha=0.3)
    else:
        _note(ax, "no fir or resample stage")


def _levels(ax: Any, s: Stats) -> None:
    ax.set_title("Per-chunk rms (solid) and peak (dashed), channel 0")
    ax.set_xlabel("time (s)")
    ax.set_ylabel("level (dBFS)")
    rates = _block_rates(s)
    drawn = 0
    for name, block in s["metrics"].items():
        chunks = block.get("chunks") or []
        if not chunks:
            continue
        rate = rates.get(name, float(s["input"]["sample_rate"]))
        # Each chunk's level holds from its start to its end (the last point closes the last chunk).
        t = [c["start_frame"] / rate for c in chunks] + [(chunks[-1]["start_frame"] + chunks[-1]["frames"]) / rate]
        rms = [c["channels"][0]["rms"] for c in chunks] + [chunks[-1]["channels"][0]["rms"]]
        peak = [c["channels"][0]["peak"] for c in chunks] + [chunks[-1]["channels"][0]["peak"]]
        (line,) = ax.step(t, _db(rms, power=False), where="post", label=f"{name} rms")
        ax.step(t, _db(peak, power=False), where="post", linestyle="--", color=line.get_color(), label=f"{name} peak")
        drawn += 1
    if drawn:
        ax.legend(loc="lower right", fontsize=8, ncol=2)
        ax.grid(True, alpha=0.3)
    else:
        _note(ax, "no per-chunk rows in these statistics")


def _block_rates(s: Stats) -> dict[str, float]:
    """Each metrics block's own rate: the input's, changed by every resampler before it."""
    rate = float(s["input"]["sample_rate"])
    rates = {}
    for st in s["stages"]:
        if st["type"] == "metrics":
            rates[st["name"]] = rate
        if "sample_rate" in st and st["type"] == "resample":
            rate = float(st["sample_rate"])
    rates["output"] = float(s["output"].get("sample_rate", rate))
    return rates


# A batch file's status -> the mark after its name (ok and skipped, whose
# outputs exist, have none).
_STATUS_MARK = {"failed": "  (FAILED)", "interrupted": "  (interrupted)", "not_run": "  (not run)"}


def _written(f: Stats) -> bool:
    """Whether the file's output exists (processed now, or up to date and skipped)."""
    return f.get("status") in ("ok", "skipped")


def _number(v: Any) -> float | None:
    """A JSON number as a float; None for null, an absent key, or anything else."""
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) else None


def _file_rows(ax: Any, files: list[Stats]) -> None:
    """Files down the y axis, first at the top, each named (and marked if it has no output)."""
    names = [os.path.basename(f.get("file") or "?") + _STATUS_MARK.get(f.get("status", ""), "") for f in files]
    ax.set_ylabel("file")
    ax.set_yticks(list(range(len(files))), names)
    ax.set_ylim(max(len(files), 1) - 0.5, -0.5)  # inverted: the first file at the top


def _batch_levels(ax: Any, s: Stats) -> None:
    files = s["files"]
    y = list(range(len(files)))

    def loudest(f: Stats, key: str) -> float:
        values = [v for v in (f.get(key) or []) if v is not None]
        return max(values) if values else 0.0

    rms = _db([loudest(f, "output_rms") for f in files], power=False)
    peak = _db([loudest(f, "output_peak") for f in files], power=False)
    ax.barh([i - 0.2 for i in y], [max(v, -120.0) + 120.0 for v in rms], height=0.4, left=-120.0,
            label="rms (loudest channel)")
    ax.barh([i + 0.2 for i in y], [max(v, -120.0) + 120.0 for v in peak], height=0.4, left=-120.0,
            label="peak (loudest channel)")
    ax.set_title(f"Batch: {len(files)} files, {s['counts'].get('failed', 0)} failed (output levels)")
    ax.set_xlabel("level (dBFS)")
    _file_rows(ax, files)
    ax.set_xlim(-120.0, 6.0)
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=9)
    ax.grid(True, axis="x", alpha=0.3)


def _batch_clips(ax: Any, s: Stats) -> None:
    files = s["files"]
    y = list(range(len(files)))
    clipped = [f.get("clipped_samples") or 0 for f in files]
    ax.barh(y, clipped, color=["tab:red" if c else "tab:green" for c in clipped])
    top = max(clipped, default=0)
    ax.set_xlim(0, top * 1.15 if top > 0 else 1)
    for i, c in enumerate(clipped):
        ax.text(c, i, f" {c}", va="center", fontsize=9)
    ax.set_title("Clipped output samples per file" + ("" if top > 0 else " (none)"))
    ax.set_xlabel("clipped samples")
    _file_rows(ax, files)
    ax.grid(True, axis="x", alpha=0.3)


def _batch_loudness(ax: Any, s: Stats) -> None:
    """Per file, the integrated loudness (LUFS) and the true peak (dBTP): a dot each, joined by a line."""
    files = s["files"]
    ax.set_title("Integrated loudness and true peak per file (EBU R128, the metrics stage with loudness)")
    ax.set_xlabel("integrated loudness (LUFS) / true peak (dBTP)")
    _file_rows(ax, files)
    written = [_written(f) for f in files]
    lufs = [_number(f.get("integrated_lufs")) if w else None for f, w in zip(files, written)]
    tp = [_number(f.get("true_peak_dbtp")) if w else None for f, w in zip(files, written)]
    values = [v for v in lufs + tp if v is not None]
    if not values:
        ax.set_xticks([])  # no scale to read
        if not any(written):
            _note(ax, "no file has an output (every file failed or did not run): no loudness to draw")
        else:
            _note(ax, "no file has a loudness value: add `loudness: true` to a metrics stage "
                      "(or every file was silent)")
        return
    # From a round 10 dB below the quietest value (at least -40) to just above
    # full scale: 0 dBTP, the inter-sample overs, stays in view.
    left = min(-40.0, 10.0 * math.floor((min(values) - 5.0) / 10.0))
    right = max(3.0, math.ceil(max(values) + 3.0))
    ax.set_xlim(left, right)
    ax.axvline(0.0, color="tab:red", linewidth=1.0, linestyle=":", label="0 dBTP (full scale)")
    for i, (lo, hi) in enumerate(zip(lufs, tp)):
        if lo is not None and hi is not None:
            ax.plot([lo, hi], [i, i], color="0.6", linewidth=1.5, zorder=1)
    nan = math.nan
    ys = list(range(len(files)))
    ax.plot([nan if v is None else v for v in lufs], ys, "o", color="tab:blue", markersize=8, linestyle="none",
            label="integrated loudness (LUFS)", zorder=3)
    ax.plot([nan if v is None else v for v in tp], ys, "D", color="tab:orange", markersize=7, linestyle="none",
            label="true peak (dBTP)", zorder=3)
    for i, (lo, hi) in enumerate(zip(lufs, tp)):
        if lo is not None:
            ax.annotate(f"{lo:.1f} LUFS", (lo, i), xytext=(0, 7), textcoords="offset points", ha="center",
                        va="bottom", fontsize=8, color="tab:blue")
        if hi is not None:
            ax.annotate(f"{hi:.1f} dBTP", (hi, i), xytext=(0, -7), textcoords="offset points", ha="center",
                        va="top", fontsize=8, color="tab:orange")
    # Written files with no integrated loudness: no 400 ms block above the
    # gates (silence, or near it). A cross at the left edge, and a word above
    # the row (clear of a true peak's diamond on it).
    silent = [i for i, (w, lo) in enumerate(zip(written, lufs)) if w and lo is None]
    if silent:
        ax.plot([left] * len(silent), silent, "x", color="0.3", markersize=9, markeredgewidth=2,
                linestyle="none", clip_on=False, label="silent: no gated block (integrated null)", zorder=3)
        for i in silent:
            ax.annotate("silent (no 400 ms block above the gates)", (left, i), xytext=(8, 5),
                        textcoords="offset points", va="bottom", fontsize=9, color="0.3")
    for i, (f, w) in enumerate(zip(files, written)):
        if not w:
            status = str(f.get("status", "?")).replace("_", " ")
            ax.annotate(f"no output ({status})", (left, i), xytext=(8, 0), textcoords="offset points",
                        va="center", fontsize=9, color="0.5")
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=9)
    ax.grid(True, axis="x", alpha=0.3)


def _batch_figure(s: Stats, figure_class: Any) -> Any:
    n = max(len(s["files"]), 1)
    fig = figure_class(figsize=(12, max(4.0, 1.2 + 0.32 * n) * 3), dpi=100, layout="constrained")
    grid = fig.add_gridspec(3, 1)
    # Made in this order so that get_axes() is (levels, clips, loudness), as
    # before the loudness panel; drawn with loudness in the middle.
    _batch_levels(fig.add_subplot(grid[0, 0]), s)
    _batch_clips(fig.add_subplot(grid[2, 0]), s)
    _batch_loudness(fig.add_subplot(grid[1, 0]), s)
    fig.suptitle(f"sigstream batch: {s.get('out_dir', '?')} ({s.get('backend', '?')}, {s.get('wall_s', 0):.2f} s)",
                 fontsize=12)
    return fig


def make_figure(stats: str | os.PathLike[str] | Stats) -> Any:
    """The figure of a run (a matplotlib Figure, not yet saved), or of a batch summary."""
    s = load(stats)
    # A bare Figure (no pyplot): no GUI backend is chosen, nor a user's changed.
    from matplotlib.figure import Figure

    if _is_batch(s):
        return _batch_figure(s, Figure)
    fig = Figure(figsize=(12, 15), dpi=100, layout="constrained")
    grid = fig.add_gridspec(4, 2)
    _waveforms(fig.add_subplot(grid[0, :]), s)
    _spectra(fig.add_subplot(grid[1, :]), s)
    _magnitude(fig.add_subplot(grid[2, 0]), s)
    _group_delay(fig.add_subplot(grid[2, 1]), s)
    _levels(fig.add_subplot(grid[3, :]), s)
    src = s["input"].get("path", "?")
    out = s["output"].get("path") or "(no audio output)"
    fig.suptitle(f"sigstream: {src} -> {out}  ({s['input']['sample_rate']:g} Hz in, "
                 f"{s['output'].get('sample_rate', s['input']['sample_rate']):g} Hz out, {s.get('backend', '?')})",
                 fontsize=12)
    return fig


def plot(stats: str | os.PathLike[str] | Stats, out: str | os.PathLike[str]) -> str:
    """Draws the figure into `out` (PNG, SVG or PDF by its extension); returns the path."""
    ext = os.path.splitext(os.fspath(out))[1].lower()
    if ext not in (".png", ".svg", ".pdf"):
        raise ValueError(f"{os.fspath(out)}: the figure's extension must be .png, .svg or .pdf")
    fig = make_figure(stats)
    tmp = os.fspath(out) + ".part" + ext  # whole or not at all, as every sigstream output
    fig.savefig(tmp)
    os.replace(tmp, out)
    return os.fspath(out)


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    usage = "usage: sigstream plot STATS.json [-o FIG.png|.svg|.pdf]"
    out = None
    if "-o" in args:
        i = args.index("-o")
        if i + 1 >= len(args):
            print(usage, file=sys.stderr)
            return 2
        out = args[i + 1]
        del args[i:i + 2]
    if len(args) != 1:
        print(usage, file=sys.stderr)
        return 2
    stats = args[0]
    if out is None:
        out = os.path.splitext(stats)[0] + ".png"
    try:
        import matplotlib  # noqa: F401  (checked first: the CLI's install hint)
        import numpy  # noqa: F401
    except ImportError as e:
        # The CLI tries the next Python and says what it passed over itself.
        if os.environ.get("SIGSTREAM_PLOT_TRYING") != "1":
            print(f"sigstream plot: {e}", file=sys.stderr)
        return 3
    if os.path.splitext(out)[1].lower() not in (".png", ".svg", ".pdf"):
        print(f"sigstream plot: {out}: the figure's extension must be .png, .svg or .pdf", file=sys.stderr)
        return 2
    try:
        path = plot(stats, out)
    except (OSError, ValueError, KeyError, TypeError, IndexError) as e:
        print(f"sigstream plot: {stats}: {e}", file=sys.stderr)
        return 1
    print(f"sigstream plot: wrote {path}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
