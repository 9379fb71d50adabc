"""scripts/check_layers.py (DESIGN §1b's layers): an upward include fails unless it is
listed in scripts/layer_debt.txt, a listed one that is gone fails too, and the tree holds."""
from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path
from types import ModuleType

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "scripts" / "check_layers.py"


def load() -> ModuleType:
    spec = importlib.util.spec_from_file_location("check_layers", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def write(root: Path, files: dict[str, str]) -> list[str]:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return sorted(files)


def test_an_upward_include_fails_and_a_downward_one_does_not(tmp_path: Path) -> None:
    cl = load()
    files = write(tmp_path, {
        "kernels/cpu/fir.cpp": '#include "core/error.hpp"\n#include "stages/fir/fir.hpp"\n',
        "kernels/cuda/fir.cuh": '#include <cuda_runtime.h>\n#include <model/plan.hpp>\n',
        "stages/fir/plan.cpp": '#include "kernels/cpu/fir.hpp"\n  #  include "app/common.hpp"\n',
        "app/main.cpp": '#include "pipeline/pipeline.hpp"\n#include <vector>\n',
    })
    problems = cl.check(tmp_path, files)
    assert problems == [
        "kernels/cpu/fir.cpp -> stages/fir/fir.hpp: includes a layer above its own (DESIGN §1b)",
        "kernels/cuda/fir.cuh -> model/plan.hpp: includes a layer above its own (DESIGN §1b)",
        "stages/fir/plan.cpp -> app/common.hpp: includes a layer above its own (DESIGN §1b)",
    ]


def test_the_longest_folder_names_the_layer(tmp_path: Path) -> None:
    cl = load()
    assert cl.layer_of("pipeline/config/yaml_reader.cpp") == "pipeline/config"
    assert cl.layer_of("pipeline/plan.cpp") == "pipeline"
    assert cl.layer_of("configs/demo.yaml") is None
    files = write(tmp_path, {"pipeline/config/reader.cpp": '#include "stages/stage.hpp"\n'})
    assert len(cl.check(tmp_path, files)) == 1  # the walker (2) may not include stages (3)


def test_listed_debt_passes_and_a_stale_line_fails(tmp_path: Path) -> None:
    cl = load()
    files = write(tmp_path, {
        "stages/gain/gain.cpp": '#include "pipeline/plan.hpp"\n',
        "scripts/layer_debt.txt": "# why\nstages/gain/gain.cpp -> pipeline/plan.hpp\n"
                                  "stages/fir/plan.cpp -> pipeline/config.hpp  # gone\n",
    })
    assert cl.check(tmp_path, files) == [
        "stages/fir/plan.cpp -> pipeline/config.hpp: listed in scripts/layer_debt.txt but gone: remove the line"
    ]


def test_tests_benchmarks_and_qa_tests_include_anything(tmp_path: Path) -> None:
    cl = load()
    files = write(tmp_path, {
        "tests/unit/test_x.cpp": '#include "app/common.hpp"\n',
        "bench/b.cu": '#include "pipeline/pipeline.hpp"\n',
        "stages/fir/test_fir.cpp": '#include "pipeline/pipeline.hpp"\n',
    })
    assert cl.check(tmp_path, files) == []
    # A file named test_* elsewhere is held to its layer.
    files = write(tmp_path, {"stages/test_registry.cpp": '#include "pipeline/pipeline.hpp"\n'})
    assert len(cl.check(tmp_path, files)) == 1


def test_the_repository_holds_its_layers() -> None:
    if not (REPO / ".git").exists():
        return  # an installed copy without the repository: nothing to check
    p = subprocess.run([sys.executable, str(SCRIPT), str(REPO)], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
