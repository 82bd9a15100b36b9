"""How fast the embedded judge reads and writes on this machine, with and without its grammar.

    python bench/embedded_speed.py [--model qwen2.5-coder-1.5b] [--threads 2]

One judge-shaped call (a Hebrew source of about 500 tokens, six claims, the batch judge's own verdict schema) to the
embedded model in this process: the prompt alone (max_tokens 1), then 200 tokens of reply without and with
the JSON-schema grammar of judge/llm/grammar.py, each twice. Prompt tokens a second and reply tokens a second
are what the first line's run time is made of (bench/README.md, "The first line's run")."""

from __future__ import annotations

import argparse
import time

from judge.judges.model import batch_verdict_model
from judge.llm.grammar import gbnf
from judge.llm.weights import model_path

CLAIMS = [f"c{i}" for i in range(6)]
SCHEMA = batch_verdict_model(CLAIMS, ["1.1", "1.2", "1.3"]).model_json_schema()  # what a batch judge decodes under
SOURCE = "מצפה רמון הוא יישוב בנגב, השוכן על שפתו הצפונית של המכתש הגדול בעולם מסוגו. " * 12
MESSAGES = [{"role": "system", "content": "You are a careful judge. Reply in JSON."},
            {"role": "user", "content": "Source:\n" + SOURCE + "\nClaims:\n" + "\n".join(f"{c}: מצפה רמון הוא יישוב בנגב {c[1:]}" for c in CLAIMS)
             + "\nGive a verdict for every claim with a one-sentence rationale."}]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default="qwen2.5-coder-1.5b")
    ap.add_argument("--threads", type=int, default=2)
    args = ap.parse_args()
    from llama_cpp import Llama, LlamaGrammar

    llm = Llama(model_path=str(model_path(args.model)), n_ctx=4096, n_threads=args.threads, n_threads_batch=args.threads, seed=0, verbose=False)
    grammar = LlamaGrammar.from_string(gbnf(SCHEMA), verbose=False)

    def call(with_grammar: bool, max_tokens: int) -> tuple[float, int, int]:
        llm.reset()  # the prompt is read again each time
        t = time.perf_counter()
        out = llm.create_chat_completion(messages=MESSAGES, temperature=0, max_tokens=max_tokens, seed=0, grammar=grammar if with_grammar else None)
        return time.perf_counter() - t, out["usage"]["prompt_tokens"], out["usage"]["completion_tokens"]

    prompt_s = min(call(False, 1)[0] for _ in range(2))
    _, prompt_tokens, _ = call(False, 1)
    print(f"prompt: {prompt_tokens} tokens in {prompt_s:.1f} s = {prompt_tokens / prompt_s:.1f} tokens/s")
    for with_grammar in (False, True, False, True):
        wall, _, n = call(with_grammar, 200)
        print(f"{'grammar   ' if with_grammar else 'no grammar'}: {n} reply tokens in {wall - prompt_s:.1f} s after the prompt = {n / (wall - prompt_s):.1f} tokens/s")


if __name__ == "__main__":
    main()
