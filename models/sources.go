package models

// SourceDoc is one document a model number comes from (docs/model-configs.md
// §0 has the same keys, with what each copy is and why it was read instead of
// the canonical file).
type SourceDoc struct {
	Key  string
	What string // the document and, for a repository file, its commit
	URL  string // where it is, or the canonical file it copies
}

// Sources returns the source documents model numbers cite, in a fixed order.
func Sources() []SourceDoc {
	return []SourceDoc{
		{"HF-L2", "copy of meta-llama/Llama-2-7b-hf config.json quoted in full on a public page (also microsoft/Olive examples/llm/config.py)",
			"https://andrew211vibe.notion.site/Rust-95e6e7afffc34595a9205923aa222030 (canonical https://huggingface.co/meta-llama/Llama-2-7b-hf/blob/main/config.json)"},
		{"MC-L2", "Llama 2 model card: 7B, 4k context, no GQA for 7B", "https://hf.898520.xyz/NousResearch/Llama-2-7b-hf"},
		{"L2-MOD", "module printout of Llama-2 (q/k/v/o/mlp bias=False), Retruth/deontic nlp_models/llama2/README.md", "https://github.com/Retruth/deontic"},
		{"PROF", "verbatim config.json bodies of Qwen2.5-7B and Qwen3-30B-A3B, citsjtu2020/LLM-Prof sglang/Model_Config.md @8434c8d19c396b2f95d92a67845a7c0a0e0dd512",
			"https://github.com/citsjtu2020/LLM-Prof"},
		{"Q2-MOD", "module printout of Qwen2-7B-Instruct (q/k/v bias=True, o bias=False), Retruth/deontic nlp_models/qwen2/README.md", "https://github.com/Retruth/deontic"},
		{"SIMA", "simaai/gemma-3-4b-it-a16w4 devkit/vlm_config.json (rev 70b8dfb), whose lm_cfg restates google/gemma-3-4b-it's text config",
			"https://fast.hugflare.com/simaai/gemma-3-4b-it-a16w4/raw/main/devkit/vlm_config.json (canonical https://huggingface.co/google/gemma-3-4b-it/blob/main/config.json, gated)"},
		{"G3-BLOG", "Google Developers Blog, \"Gemma explained: What's new in Gemma 3\": 5 local layers (window 1024) per global layer",
			"https://openerrata.com/corrections/8d27b5f3-141d-4759-9685-952b131c461a"},
		{"MAXTEXT-G3", "AI-Hypercomputer/maxtext MaxText/configs/models/gemma3-4b.yml @104cfc27927f295c8e9e9aa295e99f5f9fd42d44 (vocab_size 262_144, logits_via_embedding: True)",
			"https://github.com/AI-Hypercomputer/maxtext"},
		{"FASTLLM", "copies of Qwen3-Coder-30B-A3B-Instruct's config.json and README.md, ztxz16/fastllm @f8f04c33abb63f6cd4e45f9427a55949a8ebbb44",
			"https://github.com/ztxz16/fastllm (canonical https://huggingface.co/Qwen/Qwen3-Coder-30B-A3B-Instruct/blob/main/config.json)"},
		{"OSS20", "copy of openai/gpt-oss-20b config.json, jihengzhang/jihz-gpt-oss-20b @7ec89800d2b55da8f65106e8a6f794b7b6433df8",
			"https://github.com/jihengzhang/jihz-gpt-oss-20b (canonical https://huggingface.co/openai/gpt-oss-20b/blob/main/config.json)"},
		{"TF-OSS", "huggingface/transformers configuration_gpt_oss.py class defaults @02b8f42b4240dddea1b27c45d2dc95fb2682f841 (\"similar to GPT-OSS-120B\")",
			"https://github.com/huggingface/transformers"},
		{"MAXTEXT-OSS120", "AI-Hypercomputer/maxtext MaxText/configs/models/gpt-oss-120b.yml @0d1a444172acb6d77145d93682002e2fcbf873a5, written from the canonical config",
			"https://github.com/AI-Hypercomputer/maxtext (canonical https://huggingface.co/openai/gpt-oss-120b/blob/main/config.json)"},
		{"TF-MIX", "huggingface/transformers configuration_mixtral.py class defaults (docstring checkpoint mistralai/Mixtral-8x7B-v0.1) @008e574391258935f3ecc3035c882e73bbcac419",
			"https://github.com/huggingface/transformers (canonical https://huggingface.co/mistralai/Mixtral-8x7B-v0.1/blob/main/config.json)"},
		{"AZ-MIX", "Azure/azureml-assets mistralai-Mixtral-8x7B-Instruct-v01 description.md: 46.7B total, 12.9B per token, top-2 of 8", "https://github.com/Azure/azureml-assets"},
		{"DS-LITE", "DeepSeek-V2-Lite model card as summarised on two pages; arXiv:2405.04434 App. B",
			"https://huggingface.co/deepseek-ai/DeepSeek-V2-Lite (summaries https://drose.io/aitools/tools/deepseek-v2-lite, https://promptlayer.com/models/deepseek-v2-lite-fa0e)"},
		{"MAXTEXT-DS2", "AI-Hypercomputer/maxtext MaxText/configs/models/deepseek2-16b.yml (\"DeepSeek V2-Lite - 16B\") @0ed7bd529b9d690570473c3525d1efeda6b6c944",
			"https://github.com/AI-Hypercomputer/maxtext (canonical https://huggingface.co/deepseek-ai/DeepSeek-V2-Lite/blob/main/config.json)"},
		{"DS2-CLASS", "DeepseekV2Config class defaults (norm_topk_prob False), a copy in DeepSeek-VL2's configuration_deepseek.py",
			"https://github.com/deepseek-ai/DeepSeek-VL2"},
		{"TF-DS3", "huggingface/transformers configuration_deepseek_v3.py class defaults @001f85b38fb432858ace93f18622f07cec46d874", "https://github.com/huggingface/transformers"},
		{"TF-GLM", "huggingface/transformers configuration_glm4_moe.py class defaults of an early version (docstring THUDM/GLM-4-100B-A10B) @008c726d1655845afb7ca71013b984ceac231e57",
			"https://github.com/huggingface/transformers"},
		{"TF-Q35", "huggingface/transformers configuration_qwen3_5_moe.py Qwen3_5MoeTextConfig defaults (docstring Qwen/Qwen3.5-35B-A3B) @008e574391258935f3ecc3035c882e73bbcac419",
			"https://github.com/huggingface/transformers"},
		{"TF-QN", "huggingface/transformers configuration_qwen3_next.py defaults (docstring Qwen/Qwen3-Next-80B-A3B-Instruct) @008e574391258935f3ecc3035c882e73bbcac419",
			"https://github.com/huggingface/transformers"},
		{"gguf", "the GGUF file's own metadata keys and tensor infos (simrun bench -m)", ""},
		{"LCPP", "llama.cpp's model graph code (src/models/*.cpp, llama-graph.cpp) as docs/llama-graph.md §0 cites it", "https://github.com/ggml-org/llama.cpp"},
	}
}

// lookupSource returns the source document of a key.
func lookupSource(key string) (SourceDoc, bool) {
	for _, s := range Sources() {
		if s.Key == key {
			return s, true
		}
	}
	return SourceDoc{}, false
}
