#pragma once
// `sigstream plot` and --plot (SPEC §8): the figure is drawn by
// python/sigstream/plot.py (compiled into the CLI as text), run by a Python
// with matplotlib: $SIGSTREAM_PYTHON, python3 on the PATH or /usr/bin/python3.
#include <string>

namespace sigstream::app {

// plot.py's source (generated: app/plot_script.cpp.in).
const char* plot_script();

// Draws STATS (a statistics JSON file) into FIG (.png, .svg or .pdf) with
// the first Python that has matplotlib: $SIGSTREAM_PYTHON, python3 on the
// PATH, /usr/bin/python3 (saying so on stderr when it passed one over).
// Returns 0 when drawn (`drawn_by`, if given, names the Python); 2 with a
// message on stderr when none has matplotlib (saying how to install it) or
// for a bad figure name; 1 for an unreadable or bad statistics file, or a
// drawing that failed.
int draw_figure(const std::string& stats_json, const std::string& figure,
                std::string* drawn_by = nullptr);

// The figure of a run whose statistics are in memory (--plot when the run
// wrote no JSON file): written to a temporary file, drawn, removed.
int draw_figure_from_text(const std::string& stats_text, const std::string& figure);

} // namespace sigstream::app
