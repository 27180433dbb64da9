"""tests/test_layers.py: the layers of design.md hold, checked with plain text searches.

A layer uses only the layers below it: the bindings include public headers only, core names
no backend, one backend never includes another's private headers, public headers never reach
into cpp/src. Each check prints the offending lines when it fails.
"""

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CPP = ROOT / "cpp"
BACKENDS = ("cpu", "cuda")
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)

if not (CPP / "src").is_dir():
    pytest.skip("needs the source tree (cpp/)", allow_module_level=True)


def sources(folder):
    return sorted(p for p in folder.rglob("*") if p.suffix in {".h", ".cpp", ".cuh"})


def includes(folder):
    """(file, line) for every quoted #include under folder."""
    for path in sources(folder):
        for match in INCLUDE.finditer(path.read_text()):
            yield path.relative_to(ROOT), match.group(1)


def offenders(folder, is_bad):
    return [f"{path}: #include \"{name}\"" for path, name in includes(folder) if is_bad(name)]


def private(name):
    return name.split("/")[0] in BACKENDS + ("core",)


def test_bindings_include_public_headers_only():
    bad = offenders(CPP / "bindings", private)
    assert not bad, "the bindings reach into cpp/src:\n" + "\n".join(bad)


def test_public_headers_never_include_private_ones():
    bad = offenders(CPP / "include", private)
    assert not bad, "public headers include private ones:\n" + "\n".join(bad)


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_backend_never_includes_another_backends_headers(backend):
    others = [b for b in BACKENDS if b != backend]
    bad = offenders(CPP / "src" / backend, lambda name: name.split("/")[0] in others)
    assert not bad, f"{backend} includes another backend's private headers:\n" + "\n".join(bad)


def test_core_names_no_backend():
    bad = offenders(CPP / "src" / "core", lambda name: name.split("/")[0] in BACKENDS)
    backend_namespace = re.compile(r"\b(" + "|".join(BACKENDS) + r")::")
    for path in sources(CPP / "src" / "core"):
        for number, line in enumerate(path.read_text().splitlines(), 1):
            code = line.split("//")[0]
            if backend_namespace.search(code):
                bad.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()}")
    assert not bad, "core names a backend:\n" + "\n".join(bad)


def test_the_bindings_build_without_the_private_include_path():
    cmake = (ROOT / "CMakeLists.txt").read_text()
    for target in re.findall(r"target_include_directories\((\w+)[^)]*cpp/src", cmake):
        assert target != "_core", "the bindings (_core) must not see cpp/src"


def test_backends_register_themselves():
    """core never starts a backend by name: each registers itself from its own folder."""
    for backend in BACKENDS:
        text = "".join(p.read_text() for p in sources(CPP / "src" / backend))
        assert "XRT_REGISTER_BACKEND(" in text, f"{backend} does not register its backend"
        assert "XRT_REGISTER_KERNELS(" in text, f"{backend} does not register its kernels"
