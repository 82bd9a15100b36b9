import sys, llama_cpp
m = llama_cpp.Llama(model_path=sys.argv[1], n_ctx=256, verbose=False, seed=0)
out = m.create_completion("hello world this is a longer prompt with many tokens " * 3, max_tokens=8)
print("OK", repr(out["choices"][0]["text"])[:60], llama_cpp.llama_print_system_info().decode()[:300])
