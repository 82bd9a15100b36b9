#!/usr/bin/env bash
# The embedded model on an Intel Xeon with AVX-512 and AMX advertised (the CPU that broke the README):
# a portable llama-cpp-python wheel (built elsewhere with the README's CMAKE_ARGS) against a native build
# made on that machine, both on a tiny random GGUF (llama architecture, Q8_0, 1.7 MB, made with the `gguf`
# package), directly and through judge's child-process provider (judge/llm/local.py).
# Needs, in $DIR: the portable wheel, a trimmed llama-cpp-python sdist, tiny.gguf (bench/tiny_gguf.py) and the
# pure-Python deps as wheels (whl/). Results: bench/README.md, "Embedded model on AVX-512/AMX".
set -x; cd "${DIR:-.devcheck}"
python3 -m pip install -q --no-index --no-deps --target /tmp/deps whl/*.whl
python3 -m pip install -q --no-index --no-deps --target /tmp/portable llama_cpp_python-*.whl
PYTHONPATH=/tmp/portable:/tmp/deps python3 "$OLDPWD/bench/portable_try.py" tiny.gguf; echo "portable rc=$?"
tar xzf llama-trim.tar.gz -C /tmp
(cd /tmp/llama_cpp_python-* && CMAKE_BUILD_PARALLEL_LEVEL=16 python3 -m pip wheel -q --no-build-isolation --no-deps -w /tmp/nw . > /tmp/build.log 2>&1; echo build rc=$?)
python3 -m pip install -q --no-index --no-deps --target /tmp/native /tmp/nw/*.whl
PYTHONPATH=/tmp/native:/tmp/deps python3 "$OLDPWD/bench/portable_try.py" tiny.gguf; echo "native rc=$?"
mkdir -p /tmp/models && cp tiny.gguf /tmp/models/gemma3-270m-a5fd3b62230a.gguf
cd - && for build in native portable; do
  JUDGE_MODEL_DIR=/tmp/models PYTHONPATH=$PWD:/tmp/$build:/tmp/deps timeout 120 python3 bench/portable_child.py; echo "child $build rc=$?"
done
