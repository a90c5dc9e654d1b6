"""Tiny models for the local-vllm cluster profile: a config, a locally trained tokenizer with a ChatML
chat template, and no weights (vLLM serves them with ``--load-format dummy``: random weights).

    python -m infersweep_vllm.models --out DIR [--words FILE]

writes ``DIR/tiny-dense`` and ``DIR/mid-dense`` (LlamaForCausalLM) and ``DIR/tiny-moe`` (Qwen3MoeForCausalLM, 8 experts,
top-2). Nothing is downloaded. ``--words`` is a file of whitespace-separated words that must each be one
token after a space (scripts/setup-vllm.sh passes the AgentX client's filler words from
libs/agentx/src/trace/prompt.ts, so synthetic prompts have about the token counts the traces ask for).
Idempotent: a model whose files are all present is left alone.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
from pathlib import Path

SPECIAL_TOKENS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
VOCAB_SIZE = 2048
# ChatML, as Qwen's templates render it; add_generation_prompt opens the assistant turn.
CHAT_TEMPLATE = (
    "{% for message in messages %}"
    "{{ '<|im_start|>' + message['role'] + '\n' + (message['content'] if message['content'] is string else '') + '<|im_end|>' + '\n' }}"
    "{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}"
)
# A few lines of ordinary text so that punctuation, digits and JSON-ish characters get merges too.
BASE_TEXT = """The quick brown fox jumps over the lazy dog. 0123456789 {"role": "user", "content": "hello"}
Session 17 of 64: play 3, turn 12; trace id a1b2c3d4 - cache bust marker [#42].
def main(argv): return 0  # code, too: (x + y) * z / 2 == 1.5 and not None or True
"""

COMMON = {
    "hidden_size": 128,
    "num_hidden_layers": 2,
    "num_attention_heads": 4,
    "num_key_value_heads": 2,
    "head_dim": 32,
    "intermediate_size": 256,
    "hidden_act": "silu",
    "max_position_embeddings": 8192,
    "rms_norm_eps": 1e-6,
    "rope_theta": 10000.0,
    "tie_word_embeddings": False,
    "torch_dtype": "bfloat16",
    "use_cache": True,
    "attention_bias": False,
}


def model_configs(vocab: int, bos: int, eos: int) -> dict[str, dict]:
    ids = {"vocab_size": vocab, "bos_token_id": bos, "eos_token_id": eos}
    return {
        "tiny-dense": {
            "architectures": ["LlamaForCausalLM"],
            "model_type": "llama",
            **COMMON,
            **ids,
        },
        # heavier, so the engine and not the host sets the token rate (ITL ~13 ms on one core of this machine kind,
        # ~3 ms for tiny-dense): libs/agentx/test/cross-client-vllm.int.test.ts
        "mid-dense": {
            "architectures": ["LlamaForCausalLM"],
            "model_type": "llama",
            **COMMON,
            "hidden_size": 512,
            "num_hidden_layers": 6,
            "num_attention_heads": 8,
            "num_key_value_heads": 4,
            "head_dim": 64,
            "intermediate_size": 2048,
            **ids,
        },
        "tiny-moe": {
            "architectures": ["Qwen3MoeForCausalLM"],
            "model_type": "qwen3_moe",
            **COMMON,
            **ids,
            "num_experts": 8,
            "num_experts_per_tok": 2,
            "moe_intermediate_size": 64,
            "decoder_sparse_step": 1,
            "mlp_only_layers": [],
            "norm_topk_prob": True,
            "output_router_logits": False,
            "router_aux_loss_coef": 0.0,
        },
    }


def corpus(words: list[str], seed: int = 0) -> list[str]:
    """Deterministic training lines: each word many times after a space, in shuffled order."""
    rnd = random.Random(seed)
    lines = [BASE_TEXT] * 20
    pool = words * 40
    rnd.shuffle(pool)
    for i in range(0, len(pool), 24):
        lines.append(" " + " ".join(pool[i : i + 24]))
    return lines


def train_tokenizer(words: list[str]):
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=VOCAB_SIZE,
        special_tokens=SPECIAL_TOKENS,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tok.train_from_iterator(corpus(words), trainer=trainer)
    return tok


def write_json(path: Path, obj: dict) -> None:
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(json.dumps(obj, indent=2) + "\n")
    os.replace(tmp, path)


FILES = ["config.json", "generation_config.json", "tokenizer.json", "tokenizer_config.json", "special_tokens_map.json"]


def generate(out: Path, words: list[str], check: bool = True) -> list[str]:
    """Write every model that is not complete yet; returns the names written."""
    cfg_names = list(model_configs(1, 0, 0))
    todo = [n for n in cfg_names if not all((out / n / f).is_file() for f in FILES)]
    if not todo:
        return []
    tok = train_tokenizer(words)
    multi = [w for w in words if len(tok.encode(" " + w).ids) != 1]
    if check and len(multi) > len(words) // 10:
        raise SystemExit(f"tokenizer: {len(multi)} of {len(words)} words are not one token (e.g. {multi[:5]})")
    vocab = tok.get_vocab_size()
    padded = (vocab + 63) // 64 * 64
    eos = tok.token_to_id("<|im_end|>")
    bos = tok.token_to_id("<|endoftext|>")
    for name, cfg in model_configs(padded, bos, eos).items():
        if name not in todo:
            continue
        d = out / name
        d.mkdir(parents=True, exist_ok=True)
        tok.save(str(d / "tokenizer.json"))
        write_json(
            d / "tokenizer_config.json",
            {
                "tokenizer_class": "PreTrainedTokenizerFast",
                "model_max_length": COMMON["max_position_embeddings"],
                "bos_token": None,
                "eos_token": "<|im_end|>",
                "pad_token": "<|endoftext|>",
                "unk_token": None,
                "add_bos_token": False,
                "add_eos_token": False,
                "clean_up_tokenization_spaces": False,
                "chat_template": CHAT_TEMPLATE,
                "added_tokens_decoder": {
                    str(tok.token_to_id(t)): {"content": t, "special": True, "lstrip": False, "rstrip": False, "normalized": False, "single_word": False}
                    for t in SPECIAL_TOKENS
                },
            },
        )
        write_json(d / "special_tokens_map.json", {"eos_token": "<|im_end|>", "pad_token": "<|endoftext|>"})
        write_json(d / "generation_config.json", {"bos_token_id": bos, "eos_token_id": eos, "do_sample": False})
        # config.json last: its presence with the others marks the model complete
        write_json(d / "config.json", cfg)
    return todo


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out", required=True, type=Path)
    p.add_argument("--words", type=Path, help="whitespace-separated words that should be one token each")
    a = p.parse_args(argv)
    words = sorted(set(a.words.read_text().split())) if a.words else []
    written = generate(a.out, words, check=bool(words))
    print(f"models in {a.out}: " + (", ".join(written) + " written" if written else "all present"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
