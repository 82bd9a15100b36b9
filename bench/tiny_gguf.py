"""A tiny random llama-architecture GGUF (Q8_0, 1.7 MB) for bench/portable_check.sh: exercises llama.cpp's
quantized matmul kernels without real weights. Needs the gguf package (pip install gguf)."""
import numpy as np, gguf
from gguf import GGUFWriter, GGMLQuantizationType
from gguf.quants import quantize
rng = np.random.default_rng(0)
V, D, L, F, H = 512, 256, 2, 512, 4
w = GGUFWriter("tiny.gguf", "llama")
w.add_context_length(512); w.add_embedding_length(D); w.add_block_count(L); w.add_feed_forward_length(F)
w.add_head_count(H); w.add_head_count_kv(H); w.add_rope_dimension_count(D // H); w.add_layer_norm_rms_eps(1e-5)
w.add_file_type(gguf.LlamaFileType.MOSTLY_Q8_0)
toks = ["<unk>", "<s>", "</s>"] + [f"<0x{i:02X}>" for i in range(256)]
toks += [f"▁w{i}" for i in range(V - len(toks))]
w.add_tokenizer_model("llama")
w.add_token_list(toks); w.add_token_scores([0.0] * V)
w.add_token_types([2, 3, 3] + [6] * 256 + [1] * (V - 259))
w.add_bos_token_id(1); w.add_eos_token_id(2); w.add_unk_token_id(0)
def t(name, shape, q=True):
    a = (rng.standard_normal(shape) * 0.02).astype(np.float32)
    if q:
        w.add_tensor(name, quantize(a, GGMLQuantizationType.Q8_0), raw_dtype=GGMLQuantizationType.Q8_0)
    else:
        w.add_tensor(name, np.ones(shape, dtype=np.float32))
t("token_embd.weight", (V, D)); t("output_norm.weight", (D,), False); t("output.weight", (V, D))
for i in range(L):
    t(f"blk.{i}.attn_norm.weight", (D,), False); t(f"blk.{i}.ffn_norm.weight", (D,), False)
    for n, s in (("attn_q", (D, D)), ("attn_k", (D, D)), ("attn_v", (D, D)), ("attn_output", (D, D)), ("ffn_gate", (F, D)), ("ffn_up", (F, D)), ("ffn_down", (D, F))):
        t(f"blk.{i}.{n}.weight", s)
w.write_header_to_file(); w.write_kv_data_to_file(); w.write_tensors_to_file(); w.close()
