"""Hugging Face transformers models built from a configuration, with random weights: nothing is downloaded.

Names: ``hf:NAME`` or a bare name from :data:`CONFIGS` (or an alias such as ``openai-community/gpt2``); ``NAME``
with a ``/`` (a hub id); a path ending in ``.json`` (a ``config.json``; ``export --config PATH``). A name that is not
built in is looked up with ``AutoConfig.from_pretrained`` in the local Hugging Face cache first, then on the hub
(configuration only, never weights; set ``HF_HUB_OFFLINE=1`` to stay offline).

The model is the configuration's language-modelling head (``AutoModelForCausalLM`` for decoders,
``AutoModelForMaskedLM`` for encoders, ``AutoModelForSeq2SeqLM`` for encoder-decoders, or the config's
``architectures[0]``), or the bare ``AutoModel`` with ``head="base"``. It is wrapped to take one input,
``input_ids`` of shape ``(batch, seq)``, with an all-ones attention mask (and ``decoder_input_ids = input_ids`` for
encoder-decoders), and to return one tensor (the logits, or the last hidden state of a base model). Attention is
the ``eager`` implementation: an explicit softmax(QK^T)V, which ONNX opset 13 can express and which the exported
graph and the measured iteration then share.

The built-in configurations copy the architecture fields of the published ``config.json`` of each model on the
Hugging Face hub. ``llama-small`` is scaledl's own: a LLaMA-architecture model of GPT-2 small's size (not a hub model).
"""
import copy
import json
import os

DEFAULT_SEQ = 128

_BERT = {"model_type": "bert", "architectures": ["BertForMaskedLM"], "attention_probs_dropout_prob": 0.1,
         "hidden_act": "gelu", "hidden_dropout_prob": 0.1, "initializer_range": 0.02, "layer_norm_eps": 1e-12,
         "max_position_embeddings": 512, "pad_token_id": 0, "position_embedding_type": "absolute",
         "type_vocab_size": 2, "vocab_size": 30522}
_GPT2 = {"model_type": "gpt2", "architectures": ["GPT2LMHeadModel"], "activation_function": "gelu_new",
         "attn_pdrop": 0.1, "embd_pdrop": 0.1, "resid_pdrop": 0.1, "bos_token_id": 50256, "eos_token_id": 50256,
         "initializer_range": 0.02, "layer_norm_epsilon": 1e-05, "n_ctx": 1024, "n_positions": 1024,
         "vocab_size": 50257}
_ROBERTA = {"model_type": "roberta", "architectures": ["RobertaForMaskedLM"], "attention_probs_dropout_prob": 0.1,
            "bos_token_id": 0, "eos_token_id": 2, "hidden_act": "gelu", "hidden_dropout_prob": 0.1,
            "initializer_range": 0.02, "layer_norm_eps": 1e-05, "max_position_embeddings": 514, "pad_token_id": 1,
            "type_vocab_size": 1, "vocab_size": 50265}
_T5 = {"model_type": "t5", "architectures": ["T5ForConditionalGeneration"], "d_kv": 64, "decoder_start_token_id": 0,
       "dropout_rate": 0.1, "eos_token_id": 1, "feed_forward_proj": "relu", "initializer_factor": 1.0,
       "is_encoder_decoder": True, "layer_norm_epsilon": 1e-06, "n_positions": 512, "pad_token_id": 0,
       "relative_attention_num_buckets": 32, "vocab_size": 32128}
_OPT = {"model_type": "opt", "architectures": ["OPTForCausalLM"], "activation_dropout": 0.0,
        "activation_function": "relu", "attention_dropout": 0.0, "bos_token_id": 2, "dropout": 0.1,
        "enable_bias": True, "eos_token_id": 2, "init_std": 0.02, "layerdrop": 0.0,
        "layer_norm_elementwise_affine": True, "max_position_embeddings": 2048, "pad_token_id": 1,
        "vocab_size": 50272}
_LLAMA = {"model_type": "llama", "architectures": ["LlamaForCausalLM"], "attention_bias": False, "bos_token_id": 1,
          "eos_token_id": 2, "hidden_act": "silu", "initializer_range": 0.02, "pretraining_tp": 1,
          "rope_theta": 10000.0, "tie_word_embeddings": False, "vocab_size": 32000}


def _with(base, **fields):
    d = dict(base)
    d.update(fields)
    return d


CONFIGS = {
    "bert-base-uncased": _with(_BERT, hidden_size=768, intermediate_size=3072, num_attention_heads=12,
                               num_hidden_layers=12),
    "bert-large-uncased": _with(_BERT, hidden_size=1024, intermediate_size=4096, num_attention_heads=16,
                                num_hidden_layers=24),
    "distilbert-base-uncased": {"model_type": "distilbert", "architectures": ["DistilBertForMaskedLM"],
                                "activation": "gelu", "attention_dropout": 0.1, "dim": 768, "dropout": 0.1,
                                "hidden_dim": 3072, "initializer_range": 0.02, "max_position_embeddings": 512,
                                "n_heads": 12, "n_layers": 6, "pad_token_id": 0, "qa_dropout": 0.1,
                                "seq_classif_dropout": 0.2, "sinusoidal_pos_embds": False, "tie_weights_": True,
                                "vocab_size": 30522},
    "roberta-base": _with(_ROBERTA, hidden_size=768, intermediate_size=3072, num_attention_heads=12,
                          num_hidden_layers=12),
    "roberta-large": _with(_ROBERTA, hidden_size=1024, intermediate_size=4096, num_attention_heads=16,
                           num_hidden_layers=24),
    "gpt2": _with(_GPT2, n_embd=768, n_head=12, n_layer=12),
    "gpt2-medium": _with(_GPT2, n_embd=1024, n_head=16, n_layer=24),
    "gpt2-large": _with(_GPT2, n_embd=1280, n_head=20, n_layer=36),
    "gpt2-xl": _with(_GPT2, n_embd=1600, n_head=25, n_layer=48),
    "t5-small": _with(_T5, d_model=512, d_ff=2048, num_heads=8, num_layers=6),
    "t5-base": _with(_T5, d_model=768, d_ff=3072, num_heads=12, num_layers=12),
    "facebook/opt-125m": _with(_OPT, hidden_size=768, ffn_dim=3072, num_attention_heads=12, num_hidden_layers=12,
                               word_embed_proj_dim=768, do_layer_norm_before=True),
    "facebook/opt-350m": _with(_OPT, hidden_size=1024, ffn_dim=4096, num_attention_heads=16, num_hidden_layers=24,
                               word_embed_proj_dim=512, do_layer_norm_before=False),
    "EleutherAI/pythia-160m": {"model_type": "gpt_neox", "architectures": ["GPTNeoXForCausalLM"],
                               "bos_token_id": 0, "eos_token_id": 0, "hidden_act": "gelu", "hidden_size": 768,
                               "initializer_range": 0.02, "intermediate_size": 3072, "layer_norm_eps": 1e-05,
                               "max_position_embeddings": 2048, "num_attention_heads": 12,
                               "num_hidden_layers": 12, "rotary_emb_base": 10000, "rotary_pct": 0.25,
                               "tie_word_embeddings": False, "use_parallel_residual": True, "vocab_size": 50304},
    "TinyLlama/TinyLlama-1.1B-Chat-v1.0": _with(_LLAMA, hidden_size=2048, intermediate_size=5632,
                                                 max_position_embeddings=2048, num_attention_heads=32,
                                                 num_hidden_layers=22, num_key_value_heads=4, rms_norm_eps=1e-05),
    "llama-small": _with(_LLAMA, hidden_size=768, intermediate_size=2048, max_position_embeddings=2048,
                         num_attention_heads=12, num_hidden_layers=12, num_key_value_heads=4, rms_norm_eps=1e-06),
}
"""Built-in configurations by hub name (architecture fields of the published config.json)."""

ALIASES = {
    "bert-base": "bert-base-uncased", "bert-large": "bert-large-uncased",
    "google-bert/bert-base-uncased": "bert-base-uncased", "google-bert/bert-large-uncased": "bert-large-uncased",
    "distilbert": "distilbert-base-uncased", "distilbert/distilbert-base-uncased": "distilbert-base-uncased",
    "FacebookAI/roberta-base": "roberta-base", "FacebookAI/roberta-large": "roberta-large",
    "openai-community/gpt2": "gpt2", "openai-community/gpt2-medium": "gpt2-medium",
    "openai-community/gpt2-large": "gpt2-large", "openai-community/gpt2-xl": "gpt2-xl",
    "google-t5/t5-small": "t5-small", "google-t5/t5-base": "t5-base",
    "opt-125m": "facebook/opt-125m", "opt-350m": "facebook/opt-350m", "pythia-160m": "EleutherAI/pythia-160m",
    "tinyllama": "TinyLlama/TinyLlama-1.1B-Chat-v1.0",
}

_HEADS = {"bert": "masked", "roberta": "masked", "distilbert": "masked", "t5": "seq2seq", "bart": "seq2seq"}


def is_hf(name):
    """Whether a model name means a Hugging Face model (see the module's doc)."""
    if name.startswith("hf:"):
        return True
    if name.startswith(("tv:", "timm:")):
        return False
    return name in CONFIGS or name in ALIASES or name.endswith(".json") or "/" in name


def bare(name):
    return name[3:] if name.startswith("hf:") else name


def config_dict(name):
    """(configuration dict, where it came from) for a built-in name or a config.json path; None for other names."""
    n = bare(name)
    if n.endswith(".json"):
        return read_config_file(n), n
    key = ALIASES.get(n, n)
    if key in CONFIGS:
        return copy.deepcopy(CONFIGS[key]), f"built-in ({key})"
    return None


# The largest configuration read, bytes (as the Java side reads one).
MAX_CONFIG_BYTES = 1 << 20


def _no_repeated_keys(pairs):
    """A JSON object's pairs as a dict, refusing a key given twice (json keeps the last one silently, where the
    Java side refuses the file: one file would make two models)."""
    d = {}
    for k, v in pairs:
        if k in d:
            raise ValueError(f'"{k}" is given twice')
        d[k] = v
    return d


def read_config_file(path):
    """A config.json as a dict; errors name the file."""
    if not os.path.exists(path):
        raise FileNotFoundError(f"{path}: no such configuration file")
    if not os.path.isfile(path):
        raise ValueError(f"{path}: not a regular file (a folder, a device, a pipe): not a model configuration")
    with open(path, "rb") as f:
        raw = f.read(MAX_CONFIG_BYTES + 1)
    if len(raw) > MAX_CONFIG_BYTES:
        raise ValueError(f"{path}: larger than {MAX_CONFIG_BYTES:,} bytes: not a model configuration")
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        raise ValueError(f"{path}: not UTF-8 text (byte {e.start}): not a model configuration") from None
    try:
        d = json.loads(text, object_pairs_hook=_no_repeated_keys)
    except json.JSONDecodeError as e:
        raise ValueError(f"{path}:{e.lineno}:{e.colno}: not JSON: {e.msg}") from None
    except RecursionError:
        raise ValueError(f"{path}: nested too deeply: not a model configuration") from None
    except ValueError as e:
        # a key given twice (the Java side refuses it too), or a number too long to convert
        raise ValueError(f"{path}: {e}") from None
    if not isinstance(d, dict):
        raise ValueError(f"{path}: a configuration is a JSON object")
    if not d.get("model_type"):
        raise ValueError(f'{path}: no "model_type" (a transformers config.json names its architecture family, '
                         'e.g. "bert" or "gpt2")')
    for key, most in SIZE_KEYS.items():
        v = d.get(key)
        if v is None:
            continue
        if isinstance(v, bool) or not isinstance(v, int) or not 1 <= v <= most:
            raise ValueError(f'{path}: "{key}" is {json.dumps(v)[:40]}; a size from 1 to {most:,} was expected')
    hidden = next((d[k] for k in ("hidden_size", "n_embd", "d_model") if d.get(k) is not None), None)
    heads = next((d[k] for k in ("num_attention_heads", "n_head") if d.get(k) is not None), None)
    if hidden and heads and d.get("head_dim") is None and hidden % heads:
        raise ValueError(f"{path}: {heads} attention heads do not divide the hidden size {hidden} (and no "
                         '"head_dim" is given)')
    return d


#: Sizes a config.json may hold, with the largest taken (no model trains beyond them).
SIZE_KEYS = {"num_hidden_layers": 10_000, "n_layer": 10_000, "num_layers": 10_000, "hidden_size": 1_000_000,
             "n_embd": 1_000_000, "d_model": 1_000_000, "num_attention_heads": 100_000, "n_head": 100_000,
             "num_key_value_heads": 100_000, "intermediate_size": 10_000_000, "n_inner": 10_000_000,
             "vocab_size": 100_000_000, "max_position_embeddings": 100_000_000, "n_positions": 100_000_000,
             "head_dim": 100_000}


def config(name):
    """The transformers configuration object of a model name (see the module's doc for the lookup order)."""
    from scaledl_profiler.deps import transformers_with_torch
    transformers = transformers_with_torch()
    found = config_dict(name)
    n = bare(name)
    if found is not None:
        d, source = found
        d = dict(d)
        model_type = d.pop("model_type")
        d.pop("transformers_version", None)
        try:
            return transformers.AutoConfig.for_model(model_type, **d)
        except (ValueError, KeyError) as e:
            raise ValueError(f"{source}: transformers {transformers.__version__} cannot build model_type "
                             f"'{model_type}': {e}") from None
    errors = []
    attempts = [True] if os.environ.get("HF_HUB_OFFLINE") in ("1", "true", "True") else [True, False]
    for local in attempts:
        try:
            return transformers.AutoConfig.from_pretrained(n, local_files_only=local)
        except Exception as e:  # transformers raises OSError, ValueError or hub errors here
            errors.append(str(e).splitlines()[0] if str(e) else type(e).__name__)
    raise ValueError(f"{n}: not a built-in configuration ({', '.join(sorted(CONFIGS))}) and not found in the "
                     f"Hugging Face cache or hub ({errors[-1]}); give the config.json: export --config PATH")


def _head_class(transformers, cfg, head):
    if head == "base":
        return transformers.AutoModel
    archs = getattr(cfg, "architectures", None) or []
    for arch in archs:
        cls = getattr(transformers, arch, None)
        if cls is not None and ("LM" in arch or "ConditionalGeneration" in arch):
            return cls
    kind = _HEADS.get(cfg.model_type) or ("seq2seq" if getattr(cfg, "is_encoder_decoder", False) else "causal")
    return {"masked": transformers.AutoModelForMaskedLM, "seq2seq": transformers.AutoModelForSeq2SeqLM,
            "causal": transformers.AutoModelForCausalLM}[kind]


def max_positions(cfg):
    """The longest sequence the configuration's position embeddings allow (None: no limit, e.g. T5)."""
    if cfg.model_type == "t5":
        return None
    for key in ("max_position_embeddings", "n_positions"):
        v = getattr(cfg, key, None)
        if isinstance(v, int) and v > 0:
            return v - 2 if cfg.model_type == "roberta" else v
    return None


def build(name, seq=None, head="lm"):
    """The wrapped model (one tensor in, one out) of a name, with random weights; checks ``seq`` fits."""
    import torch.nn as nn
    from scaledl_profiler.deps import transformers_with_torch
    transformers = transformers_with_torch()
    if head not in ("lm", "base"):
        raise ValueError(f"--head must be lm or base, got '{head}'")
    cfg = config(name)
    limit = max_positions(cfg)
    if seq is not None and limit is not None and seq > limit:
        raise ValueError(f"{bare(name)}: --seq {seq} exceeds the {limit} positions of its configuration")
    cfg.use_cache = False
    cls = _head_class(transformers, cfg, head)
    make = getattr(cls, "from_config", None) or cls._from_config  # Auto* classes, or a concrete model class
    try:
        model = make(cfg, attn_implementation="eager")
    except TypeError:  # transformers before 4.36
        cfg._attn_implementation = "eager"
        model = make(cfg)
    encoder_decoder = bool(getattr(cfg, "is_encoder_decoder", False))

    class LanguageModel(nn.Module):
        """``input_ids (batch, seq)`` -> logits (or the last hidden state of a base model)."""

        def __init__(self):
            super().__init__()
            self.model = model
            self.vocab_size = cfg.vocab_size

        def forward(self, input_ids):
            import torch
            kw = {"decoder_input_ids": input_ids} if encoder_decoder else {}
            out = self.model(input_ids=input_ids, attention_mask=torch.ones_like(input_ids), **kw)
            if hasattr(out, "logits"):
                return out.logits
            if hasattr(out, "last_hidden_state"):
                return out.last_hidden_state
            return out[0]

    wrapped = LanguageModel()
    wrapped.config = cfg
    return wrapped


def example_input(model, batch, seq):
    """Random token ids ``(batch, seq)`` below the model's vocabulary size (seeded: the same ids every time)."""
    import torch
    g = torch.Generator().manual_seed(0)
    return torch.randint(0, model.vocab_size, (batch, seq or DEFAULT_SEQ), generator=g)
