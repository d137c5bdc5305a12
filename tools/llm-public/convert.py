#!/usr/bin/env python3
"""Convert the published LLM training measurements of ``shared/data/llm-public`` into job runs tables.

Usage::

    python3 tools/llm-public/convert.py --source ../shared/data/llm-public --out datasets/gpu/llm-public

Python 3 standard library only; the output is byte-for-byte deterministic for the same inputs.  A missing input
file (or a reused Hugging Face configuration) stops the script with one line on stderr and exit status 1.

Inputs (read only): ``README.md``, ``models.csv`` and the six row files ``megatron_bridge_perf_summary.csv``,
``megatron_bridge_perf_summary_superseded.csv``, ``megatron_bridge_verification_cards.csv``,
``nemo_24xx_perf_summary.csv``, ``nemo_framework_userguide_excerpts.csv``, ``nemo_automodel_perf_summary.csv`` and
``bloom_176b_chronicles.csv`` (``#`` lines are comments; every row carries ``notes``, which the rules below read),
plus the Hugging Face ``config.json`` files of ``scaledl-core/src/test/resources/transformers`` (``--zoo``) and the
recipe settings ``tools/llm-public/recipe_settings.csv`` beside this script (rule 15).

Outputs (in ``--out``)
----------------------
``runs.csv``        one row per usable published measurement (a *job runs table*, see ``org.scaledl.io.JobRuns``).
``superseded.csv``  rows whose status is ``superseded`` (earlier published values of the same configurations: the
                    noise between page versions, not extra data), same columns.
``cards.csv``       Megatron-Bridge verification-card rows that are expressible (pre-training/SFT on a known
                    architecture with a stated layout), same columns; mostly functional runs, kept apart.
``oom.csv``         BLOOM configurations published as out of memory (``measured_ms`` empty), same columns.
``lora.csv``        LoRA fine-tuning runs (current values), same columns: kept apart from ``runs.csv`` as a held-out
                    check of the frozen-weight physics (the bundled predictor is never fitted on them).
``dropped.csv``     every other input row: ``file,line,model_key,reason``.
``configs/<key>/config.json``  the Hugging Face configuration of every model the rows name.
``PROVENANCE.md``, ``README-source.md`` (the source folder's README), ``models.csv`` (copied).

Columns of the four run files: id, source, release, task, system, model_key, family, transformer, seq, batch,
micro_batches, world_size, tensor, pipeline, context, virtual_stages, expert, expert_tensor, zero_stage, device,
gpus_per_node, nvlink_domain, inter_node_gbps, precision, recompute, recompute_modules, recompute_layers,
offload_layers, sequence_parallel, lora_rank, uneven_pipeline, document_tokens, grad_dtype, grad_reduce,
fp8_param_gather, moe_a2a_overlap, moe_dispatcher, cuda_graphs, measured_ms, tokens_per_s_per_gpu,
model_tflops_per_gpu, fit_weight, notes.

Rules, in the order they are applied to each input row
-----------------------------------------------------
1. Task.  Pre-training (``Pre-Training``, cards' ``pretrain``/``pretrain_performance``), SFT (``SFT``, ``sft``) and
   long-context runs (``Pre-Training (long sequence)``, ``sft_long_context``) are kept; ``task`` is written as
   ``pretrain``, ``pretrain_performance``, ``sft``, ``pretrain_long_context`` or ``sft_long_context``.  LoRA/PEFT
   rows (``LoRA``, the cards' ``peft``) are kept as ``lora`` with ``lora_rank`` 32 (NeMo's and Megatron-Bridge's
   default adapter dimension; AutoModel's recipes 16): no row publishes its rank, and the rank barely moves the
   step time.  Rows whose notes say SQuAD inputs are packed into the sequence (NeMo 24.07's SFT and LoRA) get
   ``document_tokens`` 256 (SQuAD v1.1 paragraphs of about 120 words with the question and the prompt: about 210
   tokens, 256 as the effective E[L^2]/E[L] of their spread; not published); Megatron-Bridge's fine-tuning rows do
   not state packing and are predicted with one document a sequence.  ``checkpoint_resume`` runs are dropped.
2. Architecture.  ``model_key`` must name a ``models.csv`` row with hidden/layers/heads.  Dropped: models with no
   published architecture (deepseek-v4-flash, nemotron-3.5-lightning-30b-a3b, card models without a key),
   nemotron-3-ultra-550b-a55b (models.csv gives no hybrid layer pattern), BLOOM sweep rows whose hidden, layers or
   heads the chronicle table does not state.  BLOOM rows take their own architecture: sweep rows get
   ``model_key`` ``bloom-h<hidden>-l<layers>-a<heads>`` (one config folder per distinct architecture), the production
   row ``bloom-176b``.
3. Layout.  ``seq`` = seq (cards that do not state it: the value their notes derive from the published tokens/s,
   step time and GBS), ``batch`` = mbs, ``tensor`` = tp, ``pipeline`` = pp, ``context`` = cp (empty: 1),
   ``virtual_stages`` = vp (empty or n/a: 1), ``expert`` = ep (empty: 1), ``expert_tensor`` = 1 (no note states
   another expert-tensor degree; a note ``ETP=<n>`` would set it).  ``world_size`` = the published dp, else
   num_gpus/(tp*pp*cp); the row is dropped unless world_size*tensor*pipeline*context == num_gpus and the notes do
   not contradict the GPU count (BLOOM: "DP*TP*PP=640 of 320 allocated GPUs").  ``micro_batches`` =
   gbs/(mbs*dp), per data-parallel replica; when that is not a positive integer a published ``ga`` with
   ga*mbs*dp == gbs would be used, otherwise the row is dropped.  A published ``ga`` that contradicts the batch
   sizes (the notes flag a few) is ignored and the note says so.  Cards without tp/pp/gbs/mbs are dropped.
4. ZeRO.  Megatron-Bridge, NeMo and the cards use Megatron core's distributed optimizer: ``zero_stage`` 1; a row
   with ``fsdp`` > 0 (the pages: "FSDP>0 = FSDP with sharding group #GPUs/(TP*PP)"; 25.04/25.07 "FSDP=1 (FSDP
   on)") is FSDP: 3.  NeMo AutoModel (PyTorch FSDP2): 3.  BLOOM (Megatron-DeepSpeed): 1, the notes' "DeepSpeed
   ZeRO-1"; a row noted "ZeRO stage 0" (an FP16 comparison run) is 0, but "ZeRO stage 0 with BF16 optimizer" is 1
   (tr11-176B-ml.slurm: "bf16 must use z0! it implements its own zero stage 1 equivalent").  ``grad_dtype`` is
   ``bf16`` for NeMo 1.x rows (releases 24.xx: Apex's distributed Adam with the launcher's ``optim.grad_sync_dtype``
   bf16; assumed, the pages do not state it), for Megatron-Bridge's rows (its performance scripts set
   ``grad_reduce_in_fp32`` false in every release: the perf YAMLs' ``mixed_precision`` block, later
   ``_benchmark_common`` and ``_perf_precision``; the verification cards' ``pretrain_performance`` runs too) and for
   NeMo 2's rows of its performance scripts (``recipe.trainer.plugins.grad_reduce_in_fp32 = False`` for FP8 recipes
   from the first version, February 2025, for every recipe from 25.07), ``fp16`` for such a row in FP16; the rows
   themselves do not state it, so each says so.  ``fp16`` for the other FP16
   rows but AutoModel's and the cards' (Megatron-LM without ``--accumulate-allreduce-grads-in-fp32`` and DeepSpeed,
   BLOOM's stack, keep FP16 training's gradients in FP16 and reduce them so, DeepSpeed's ``communication_data_type``;
   its BF16 optimizer accumulates FP32 gradients).  ``fp32`` for every other stack (Megatron core's FP32 main
   gradients in mixed precision, the recipes' default).  ``grad_reduce`` is ``after-backward`` for BLOOM
   (Megatron-DeepSpeed's pipeline engine reduces the gradients in its schedule's last steps, after every
   micro-batch's backward pass) and any row whose source or system names DeepSpeed (its engines reduce at the
   gradient-accumulation boundary), unless ZeRO 3,
   and ``overlapped`` for every other stack (Megatron core's ``overlap_grad_reduce``/``overlap_param_gather``, which the
   NeMo and Megatron-Bridge performance recipes set, NeMo 1.x's ``overlap_grad_sync``; PyTorch FSDP2's prefetching).
5. Device.  ``H100-SXM5-80GB`` -> ``H100 SXM``, ``B200`` -> ``B200``, ``GB200 (NVL72)`` -> ``GB200``,
   ``A100-SXM4-80GB`` -> ``A100 80GB`` (names of the bundled GPU catalog; no row names another part, but
   ``H200-SXM5-141GB``, ``B300``, ``GB300 (NVL72)`` and ``A100-SXM4-40GB`` are mapped for tables of the same sources,
   and a row of any other GPU goes to dropped.csv naming it); ``gpus_per_node`` and
   ``nvlink_domain`` as the row gives them (DGX 8/8, GB200 4/72). ``inter_node_gbps``: the network of one node where
   the system is not the vendor's standard one: Jean Zay's A100 nodes (BLOOM) have 4 Omni-Path 100 Gb/s links
   (BLOOM model card, "Hardware": "8 GPUs per node Using NVLink 4 inter-gpu connects, 4 OmniPath links"), 400 Gb/s;
   empty elsewhere (the predictor's standard system: DGX H100/B200 400 Gb/s per GPU, GB200 400).
6. Precision, from ``precision_norm`` with ``precision`` and the notes: BF16 -> bf16; FP16 (BLOOM's sweeps are
   "FP16 (inferred)" from the chronicle's later statement) -> fp16; MXFP8, FP8-MX, fp8_mx, the 25.09 page's
   parenthesised "FP8 (32x32 blocks)" (its note: "32x32 blocks for weights and activations (MX)", and the same
   configurations reappear as FP8-MX on the 25.11 page) and the 25.07 user guide's parenthesised values (MXFP8
   assumed by the dataset) -> mxfp8; a precision or note naming 128x128/blockwise/sub-channel scaling or fp8-sc ->
   fp8-block (no row does); every other FP8 (FP8-CS per-tensor current scaling, NeMo 24.07's delayed-scaling FP8,
   the unlabelled FP8 of NeMo 25.02 and Megatron-Bridge 26.x) -> fp8 (per-tensor scaling); NVFP4 -> nvfp4.
7. Recomputation.  BLOOM: ``full`` (the chronicle's header: "activation checkpointing"; tr11-176B-ml.slurm passes
   --checkpoint-activations; its TFLOPs "include activation recompute").  Every other row: ``auto`` (no source or
   note states a recomputation or activation offloading for these rows, and the recipes behind them set some where
   memory needs it: the predictor then takes the least recomputation that fits, and says so).
8. Sequence parallelism.  Megatron-Bridge, NeMo and cards: true when tp > 1 (their recipes enable it with TP).
   BLOOM: false (2022 Megatron-DeepSpeed had none).  AutoModel: false unless its notes name sequence parallelism.
9. Measurement.  ``measured_ms`` = step_time_s * 1000 (rows without a step time go to dropped.csv, except BLOOM's
   out-of-memory rows, which go to oom.csv); a row whose notes quote a footnote naming a performance regression of
   the run (a software defect the source says the next release resolves) goes to dropped.csv too;
   ``tokens_per_s_per_gpu`` and ``model_tflops_per_gpu`` as published.  BLOOM's published TFLOPs are hardware TFLOPs including the recomputation, not model TFLOPs: they are left out of
   ``model_tflops_per_gpu`` and quoted in the notes.
10. Status.  ``superseded`` rows go to superseded.csv, expressible card rows to cards.csv, ``oom`` rows to oom.csv,
    LoRA rows to lora.csv, the rest of the expressible rows to runs.csv.
11. ``fit_weight``.  Within each output file, rows describing the same configuration (model and configuration file,
    variant, system, GPUs, precision, seq, gbs, mbs, tp, pp, cp, vp, ep, FSDP on/off, task) are one measurement
    published n times (several releases, or one chronicle table quoted twice): each gets 1/n, rounded to 6 decimals.
12. ``transformer`` = ``configs/<key>/config.json`` (relative to the runs file), normally ``<key>`` = model_key.
    NeMo 24.07 GPT-3 175B rows (NeMo 1.0 launcher, hidden/attention dropout 0.1) use ``gpt3-175b-nemo1`` (NeMo
    2.0's GPTConfig175B sets both dropouts to 0.0).  DeepSeek-V3 rows use the Hugging Face configuration with
    its one MTP layer (which the predictor computes on the last pipeline stage: a layer and another pass through the
    output head and loss), except those labelled "w/o MTP" and AutoModel's (whose model has none), which use
    ``deepseek-v3-no-mtp`` (the same without it; 61 layers split into none of their stage x chunk counts evenly, so
    these rows say ``uneven_pipeline`` true).
13. Predictor checks.  A row is written only where the predictor accepts its layout (``Parallelism`` and
    ``MegatronExecution.check``, reproduced here): an interleaved schedule needs pp > 1; expert parallelism must
    divide dp*cp and expert x expert-tensor parallelism dp*cp*tp; tp must divide the heads (and the KV heads up to
    tp); pp <= layers, and where the layers (or layers + 1, + 2, + 1 + 2 x MTP as Megatron-Bridge's DeepSeek-V3
    layouts count the loss and each MTP layer, or + MTP + 2 with the embedding, loss and MTP counted) do not divide
    by pp*vp the row says ``uneven_pipeline`` true and the predictor splits them unevenly
    (every chunk but the first and last keeping a layer: BLOOM's 78 layers on 12 stages, Kimi K2's 61 on 8 x 4
    chunks; the recipes' exact splits are not published); ep must divide the experts; cp needs
    seq divisible by 2*cp.  Other rows go to dropped.csv naming the check.  Their configurations are still
    written, for when the predictor accepts those layouts.
14. ``id`` = <source>-<release>-<system>-<gpus>-<model_key>-<precision>-<n>, n counting identical prefixes over all
    four run files in the order runs, superseded, cards, oom (then input file, then line).  ``notes`` (<= 200
    characters) starts with the input file and line and lists what the converter assumed.

15. Recipe settings.  ``tools/llm-public/recipe_settings.csv`` (by the id of rule 14) holds what the recipe code behind
    each Megatron-Bridge and NeMo row sets, read in the tagged releases of NVIDIA-NeMo/Megatron-Bridge and NVIDIA/NeMo
    (and NeMo-Framework-Launcher for 24.07; recipe code only, never their result pages): release -> tag 25.09
    v0.1.0rc4, 25.11 v0.2.0, 26.02 v0.3.0, 26.02.01 v0.3.1, 26.04 v0.4.0, 26.04.01 v0.4.1, 26.06 v0.5.0,
    26.06.01 v0.5.1, 26.08 v0.6.0; NeMo 25.02/25.04/25.07 v2.2.0/v2.3.0/v2.4.0; each row names its file and
    function and a confidence.  For AutoModel rows the table holds what the benchmark YAML of the same model,
    layout and batch sets (``examples/llm_benchmark`` of NVIDIA-NeMo/Automodel at 36044ad3d1, the commit of the page
    the rows come from; settings only): a row whose YAML's layout or batch differs from the page's is not named.
    ``moe_a2a_overlap`` (Megatron core's ``overlap_moe_expert_parallel_comm``) is written for rows with expert
    parallelism where the table says true or false, else left empty (not overlapped).
    ``cuda_graphs`` is written for every row the table names (``cuda_graph_impl`` and ``cuda_graph_scope``):
    ``iteration`` for local graphs of ``full_iteration`` scope, ``layers`` for local graphs of a layer scope
    (``transformer_layer``, ``full_layer``) and for Transformer Engine's graphs of any scope, ``none`` where it says
    none; empty (none) for a row it does not name.  ``moe_dispatcher`` (Megatron core's token dispatcher: alltoall,
    allgather, deepep, hybridep) is written for rows with expert parallelism where the table names it, else (an
    AutoModel row whose page lists DeepEP among its kernel optimizations) ``deepep``, else left empty (all-to-all).
    ``recompute`` replaces rule 7's ``auto`` where the table's ``recompute`` has high or medium confidence:
    ``none``; ``selective:<modules>`` -> ``selective`` with ``recompute_modules`` (Megatron core's
    ``recompute_modules``, joined by ``+``); ``full:block:<n>`` -> ``full`` with ``recompute_layers`` n (Megatron's
    block method); ``full:all`` -> ``full`` on every layer (AutoModel's ``activation_checkpointing: true``, which
    checkpoints every decoder block); ``offload_layers`` is the table's ``cpu_offload`` (the first n layers of each
    model chunk keep their activations in the host's memory) with the same confidence.  The table's other column
    (userbuffer overlap) is recorded for what-if studies and not written to the run files.  ``fp8_param_gather``
    (Megatron core's ``--fp8-param-gather``: the low-precision linear layers' weights in the recipe's format alone)
    is ``true`` where the table's other settings say ``fp8_param_gather=true``, NeMo's ``fp8_params=true``,
    ``mxfp8 param gather`` or ``mxfp8 fp8_param_gather`` (not ``false``, not ``forced false``) and the row can run it
    as the predictor models it (an FP8 recipe: NVFP4's ``fp4_param_gather`` is not modelled; the distributed
    optimizer: ZeRO 1 or 2; no LoRA); else empty (off).  ``grad_reduce`` is ``gather-after-step`` where the other
    settings say ``overlap_param_gather=false`` (several MX-FP8 recipes turn it off, a NaN workaround: the distributed
    optimizer gathers the updated weights after its step, exposed) on a row of ZeRO 1 or 2 whose reduction rule 4
    has overlapped.  ``superseded.csv`` and ``cards.csv`` rows, which the table does
    not name, stay empty.

Configurations: those listed in ``REUSED`` are copied verbatim from the test resources after checking hidden size,
layers, heads and KV heads against models.csv; where models.csv gives the run's vocabulary and it differs from the
Hugging Face one (Llama 4: NeMo's NullTokenizer 200000 vs 202048) the run's vocabulary is written instead.  The
others are built from models.csv (see ``build_config``); PROVENANCE.md lists the columns and assumptions of each.
Other CSV files of the source folder with the row files' columns are read too, as tables of the same sources (their
kind, which decides rules 4, 7 and 8, from their ``source`` column: AutoModel, BLOOM, NeMo, cards, else Megatron core's
defaults); a CSV without those columns is named on stderr and skipped.
Every architecture models.csv describes gets its ``configs/<model_key>/config.json``, named by a row here or not
(Qwen3 MoE, Qwen3-Next, Llama 4 Maverick, Nemotron 3/4, the Megatron-LM scaling table's GPTs), so that other tables
of the same sources can name it; models.csv rows without an architecture (``NO_ARCHITECTURE``) or without enough of
one (``UNEXPRESSIBLE``: Nemotron 3 Ultra's hybrid layer pattern) get none.
"""
import argparse
import csv
import io
import json
import re
import shutil
import sys
from pathlib import Path

COLUMNS = ["id", "source", "release", "task", "system", "model_key", "family", "transformer", "seq", "batch",
           "micro_batches", "world_size", "tensor", "pipeline", "context", "virtual_stages", "expert",
           "expert_tensor", "zero_stage", "device", "gpus_per_node", "nvlink_domain", "inter_node_gbps", "precision",
           "recompute", "recompute_modules", "recompute_layers", "offload_layers",
           "sequence_parallel", "lora_rank", "uneven_pipeline", "document_tokens", "grad_dtype", "grad_reduce",
           "fp8_param_gather", "moe_a2a_overlap", "moe_dispatcher", "cuda_graphs", "measured_ms", "tokens_per_s_per_gpu", "model_tflops_per_gpu",
           "fit_weight", "notes"]

# the columns of every row file (the source README's list)
SOURCE_COLUMNS = ("source release task system gpu num_gpus gpus_per_node nvlink_domain precision precision_norm model "
                  "model_key model_variant hidden layers heads kv_heads ffn vocab experts topk seq gbs mbs tp pp cp vp "
                  "ep fsdp ga dp step_time_s step_time_source tokens_per_s_per_gpu tflops_per_gpu mfu_pct status "
                  "suggested_split doc_ref notes").split()
# input file -> (short name used in ids and notes, kind)
ROW_FILES = [
    ("megatron_bridge_perf_summary.csv", "mbps", "megatron-bridge"),
    ("megatron_bridge_perf_summary_superseded.csv", "mbps", "megatron-bridge"),
    ("megatron_bridge_verification_cards.csv", "mbcard", "card"),
    ("nemo_24xx_perf_summary.csv", "nemo", "nemo"),
    ("nemo_framework_userguide_excerpts.csv", "nemoug", "nemo"),
    ("nemo_automodel_perf_summary.csv", "automodel", "automodel"),
    ("bloom_176b_chronicles.csv", "bloom", "bloom"),
]
NOTE_PREFIX = {"megatron_bridge_perf_summary.csv": "mbps", "megatron_bridge_perf_summary_superseded.csv": "mbps-sup",
               "megatron_bridge_verification_cards.csv": "cards", "nemo_24xx_perf_summary.csv": "nemo24",
               "nemo_framework_userguide_excerpts.csv": "nemoug", "nemo_automodel_perf_summary.csv": "automodel",
               "bloom_176b_chronicles.csv": "bloom"}

DEVICES = {"H100-SXM5-80GB": "H100 SXM", "B200": "B200", "GB200 (NVL72)": "GB200", "A100-SXM4-80GB": "A100 80GB",
           # the parts after and beside them, in the sources' naming pattern (no row names them: assumed spellings)
           "H200-SXM5-141GB": "H200", "H200": "H200", "B300": "B300", "GB300 (NVL72)": "GB300",
           "A100-SXM4-40GB": "A100 40GB"}
SYSTEM_SHORT = {"H100 SXM": "h100", "B200": "b200", "GB200": "gb200", "A100 80GB": "a100", "H200": "h200",
                "B300": "b300", "GB300": "gb300", "A100 40GB": "a100-40gb"}

TASKS = {"Pre-Training": "pretrain", "SFT": "sft", "Pre-Training (long sequence)": "pretrain_long_context",
         "pretrain": "pretrain", "pretrain_performance": "pretrain_performance", "sft": "sft",
         "sft_long_context": "sft_long_context"}
LORA_TASKS = {"LoRA": "lora", "peft": "lora"}
CHECKPOINT_TASKS = {"checkpoint_resume"}

# model_key -> folder of scaledl-core/src/test/resources/transformers holding the same architecture
REUSED = {"llama3-8b": "llama-3-8b", "llama3-70b": "llama-3-70b", "llama3.1-405b": "llama-3.1-405b",
          "deepseek-v3": "deepseek-v3", "mixtral-8x7b": "mixtral-8x7b", "gpt-oss-20b": "gpt-oss-20b",
          "gpt-oss-120b": "gpt-oss-120b", "nemotron-3-nano-30b-a3b": "nemotron-3-nano-30b-a3b",
          "llama4-scout-17b-16e": "llama-4-scout-17b-16e", "llama4-maverick-17b-128e": "llama-4-maverick-17b-128e",
          "qwen3-30b-a3b": "qwen3-30b-a3b", "qwen3-235b-a22b": "qwen3-235b-a22b",
          "qwen3-next-80b-a3b": "qwen3-next-80b-a3b"}
NO_ARCHITECTURE = {"deepseek-v4-flash", "nemotron-3.5-lightning-30b-a3b"}
# described in models.csv, but not in full enough to build a configuration from
UNEXPRESSIBLE = {"nemotron-3-ultra-550b-a55b": "nemotron-3-ultra: models.csv gives no hybrid layer pattern"}

README_SOURCES = {
    "megatron_bridge_perf_summary.csv": "NVIDIA Megatron-Bridge Performance Summary + Archive pages "
    "(github:NVIDIA-NeMo/Megatron-Bridge docs/performance-summary*.md, every version up to 067f987df0); "
    "repository Apache-2.0",
    "megatron_bridge_perf_summary_superseded.csv": "the same pages: values changed by a later page version; "
    "repository Apache-2.0",
    "megatron_bridge_verification_cards.csv": "github:NVIDIA-NeMo/Megatron-Bridge "
    "examples/model_verification_cards/*/card.yaml @067f987df0; Apache-2.0",
    "nemo_24xx_perf_summary.csv": "NVIDIA NeMo 24.07 Performance Benchmarks (github:NVIDIA/NeMo "
    "docs/source/performance/performance_summary.md and performance_long_sequence.md); Apache-2.0",
    "nemo_framework_userguide_excerpts.csv": "NVIDIA NeMo Framework User Guide performance summary pages "
    "(containers 25.02, 25.04, 25.07), first tables only; documentation, no licence stated",
    "nemo_automodel_perf_summary.csv": "NeMo AutoModel Performance Summary (github:NVIDIA-NeMo/Automodel "
    "docs/performance-summary.md(x), HEAD 36044ad3d1); Apache-2.0",
    "bloom_176b_chronicles.csv": "github:bigscience-workshop/bigscience train/tr11-176B-ml/chronicles-prequel.md "
    "and README.md @9e64ede; Apache-2.0",
}


def fail(message):
    print("convert.py: " + message, file=sys.stderr)
    sys.exit(1)


def read_rows(path):
    """Rows of a commented CSV with the physical line number of each (comments start with '#')."""
    text = path.read_text(encoding="utf-8")
    lines = text.splitlines()
    data = [(i + 1, line) for i, line in enumerate(lines) if not line.startswith("#") and line.strip()]
    if not data:
        fail("%s has no header" % path)
    header = next(csv.reader([data[0][1]]))
    rows = []
    for number, line in data[1:]:
        values = next(csv.reader([line]))
        if len(values) != len(header):
            fail("%s:%d has %d fields, the header %d" % (path, number, len(values), len(header)))
        rows.append((number, dict(zip(header, values))))
    return rows


def integer(value):
    value = (value or "").strip()
    if value in ("", "n/a", "-"):
        return None
    try:
        f = float(value)
    except ValueError:
        return None
    return int(f) if f == int(f) else None


def number_text(value):
    """A float as short decimal text (at most 3 decimals)."""
    text = "%.3f" % value
    text = text.rstrip("0").rstrip(".")
    return text


def weight_text(value):
    text = "%.6f" % round(value, 6)
    return text.rstrip("0").rstrip(".")


def slug(text):
    return re.sub(r"-+", "-", re.sub(r"[^a-z0-9.]+", "-", text.lower())).strip("-")


def release_short(release):
    r = release.lower()
    if "tr11 prequel" in r:
        return "tr11-prequel"
    if "tr11 production" in r:
        return "tr11-production"
    m = re.search(r":([0-9][0-9a-z.\-]*)$", release)
    if m:
        return slug(m.group(1))
    m = re.match(r"automodel main \(container ([0-9.]+)\)", release)
    if m:
        return "main-" + m.group(1)
    if r == "automodel main":
        return "main"
    return slug(release)


def precision_of(row):
    """(precision, explanation) from precision_norm, precision and notes (rule 6); (None, why) for another."""
    norm = row["precision_norm"].strip().upper()
    raw = row["precision"].strip()
    notes = row.get("notes", "")
    if norm == "BF16":
        return "bf16", ""
    if norm == "FP16":
        return "fp16", ("FP16 inferred (chronicle: earlier tests were fp16)" if "inferred" in raw.lower() else "")
    if norm == "NVFP4":
        return "nvfp4", ""
    if norm == "MXFP8":
        if "32x32" in raw:
            return "mxfp8", "'FP8 (32x32 blocks)' = MX per page note (FP8-MX on 25.11)"
        if "ASSUMED" in notes:
            return "mxfp8", "parenthesised FP8 = MXFP8 (dataset assumption)"
        return "mxfp8", ""
    if norm.startswith("FP8"):
        text = raw + " " + notes
        if re.search(r"128x128|blockwise|block-wise|sub-?channel|fp8[-_]sc\b", text, re.IGNORECASE):
            return "fp8-block", "blockwise FP8"
        if norm == "FP8-CS":
            if "not published for 25.09" in notes:
                return "fp8", "FP8-CS assumed for 25.09 (no precision column)"
            return "fp8", "FP8-CS per-tensor current scaling"
        if "delayed scaling" in notes:
            return "fp8", "FP8 delayed scaling (NeMo 24.07)"
        return "fp8", "FP8 recipe not stated: per-tensor assumed"
    return None, "precision %r is not one the predictor runs (bf16, fp16, fp8, fp8-block, mxfp8, nvfp4)" % (
        row["precision_norm"].strip())


class Row:
    """One converted row plus where it came from."""

    def __init__(self, file, line, values, group_key, id_prefix):
        self.file = file
        self.line = line
        self.values = values
        self.group_key = group_key
        self.id_prefix = id_prefix


def bloom_arch(row):
    h, l, a = integer(row["hidden"]), integer(row["layers"]), integer(row["heads"])
    if not (h and l and a):
        return None
    return h, l, a


def bloom_arch_of_model(m):
    """(hidden, layers, heads) of a models.csv row."""
    return int(m["hidden"]), int(m["layers"]), int(m["heads"])


def shape_of(cfg):
    """What the predictor's layout checks read from a configuration: layers, heads, KV heads, experts, MTP layers."""
    if isinstance(cfg, bytes):
        cfg = json.loads(cfg)
    kind = cfg["model_type"]
    c = cfg.get("text_config", cfg) if kind == "llama4" or kind.startswith("qwen3_5") else cfg
    if kind == "gpt2":
        return {"layers": c["n_layer"], "heads": c["n_head"], "kv": c["n_head"], "experts": 1, "mtp": 0}
    heads = c["num_attention_heads"]
    kv = heads if kind == "deepseek_v3" else (c.get("num_key_value_heads") or heads)
    if kind == "nemotron_h":
        layers = len(c["hybrid_override_pattern"])
        experts = c.get("n_routed_experts", 1) if "E" in c["hybrid_override_pattern"] else 1
    else:
        layers = c["num_hidden_layers"]
        experts = (c.get("n_routed_experts") if kind == "deepseek_v3"
                   else c.get("num_experts") if kind in ("qwen3_moe", "qwen3_next", "qwen3_5_moe")
                   else c.get("num_local_experts") if kind in ("mixtral", "gpt_oss", "llama4") else 1) or 1
    mtp = (c.get("num_nextn_predict_layers", 0) if kind == "deepseek_v3"
           else c.get("mtp_num_hidden_layers", 0) if kind.startswith("qwen3") else 0) or 0
    return {"layers": layers, "heads": heads, "kv": kv, "experts": experts, "mtp": mtp}


def even_split_exists(layers, chunks, mtp):
    """Whether Megatron splits the layers evenly (org.scaledl.model.exec.MegatronExecution.chunkSizes)."""
    if chunks <= 0:
        return False
    if layers % chunks == 0:
        return True
    extras = [(1, 1, 0), (2, 1, 1)] + ([(1 + 2 * mtp, 0, 1 + 2 * mtp), (2 + mtp, 1, 1 + mtp)] if mtp > 0 else [])
    for add, first, last in extras:
        if (layers + add) % chunks == 0 and (layers + add) // chunks >= max(first, last, 1):
            return True
    return False


def chunk_sizes_exist(layers, chunks, mtp):
    """Whether the predictor splits the layers (org.scaledl.model.exec.MegatronExecution.split): evenly as Megatron
    does, or (given uneven_pipeline) unevenly with every chunk but the first and last keeping a layer."""
    if chunks <= 0:
        return False
    if chunks == 1 or even_split_exists(layers, chunks, mtp):
        return True
    # the uneven split: units = layers + 2 (embedding, loss) dealt floor/ceil, extras to the middle chunks first
    units = layers + 2
    sizes = [units // chunks] * chunks
    extra = units % chunks
    for j in range(1, chunks - 1):
        if extra == 0:
            break
        sizes[j] += 1
        extra -= 1
    if extra > 0:
        sizes[0] += 1
        extra -= 1
    if extra > 0:
        sizes[-1] += 1
    sizes[0] -= 1
    sizes[-1] -= 1
    return sizes[0] >= 0 and sizes[-1] >= 0 and all(x >= 1 for x in sizes[1:-1])


def predictor_refusal(shape, tp, pp, vp, cp, ep, etp, dp, seq):
    """Why the predictor refuses this layout (rule 13), or None."""
    if vp > 1 and pp == 1:
        return "an interleaved schedule (vp %d) needs a pipeline" % vp
    if (dp * cp * tp) % (ep * etp):
        return "ep x etp %d must divide dp x cp x tp = %d" % (ep * etp, dp * cp * tp)
    if tp > 1 and (shape["heads"] % tp or shape["kv"] % min(tp, shape["kv"])):
        return "tp %d does not divide %d heads / %d KV heads" % (tp, shape["heads"], shape["kv"])
    if pp > shape["layers"] or not chunk_sizes_exist(shape["layers"], pp * vp, shape["mtp"]):
        return "%d layers%s do not split into pp %d x vp %d chunks" % (
            shape["layers"], " (+%d MTP)" % shape["mtp"] if shape["mtp"] else "", pp, vp)
    if ep > 1 and shape["experts"] % ep:
        return "ep %d does not divide %d experts" % (ep, shape["experts"])
    if ep > 1 and shape["experts"] == 1:
        return "ep %d for a model without experts" % ep
    if cp > 1 and seq % (2 * cp):
        return "cp %d needs seq %d divisible by %d" % (cp, seq, 2 * cp)
    return None


class Configs:
    """The configurations rows name, built on first use; ``used`` holds those of written rows."""

    def __init__(self, models, zoo):
        self.models = models
        self.zoo = zoo
        self.cache = {}
        self.used = set()
        self.refused = set()
        self.catalog = set()
        self.norule = set()

    def get(self, key, source):
        if key not in self.cache:
            kind, detail = source
            cfg, line = build_config(key, kind, detail, self.models, self.zoo)
            self.cache[key] = (cfg, line, shape_of(cfg))
        return self.cache[key]


def convert_row(file, short, kind, line, row, models, configs):
    """(destination, Row) or ('dropped', reason)."""
    notes = row.get("notes", "")
    task_raw = row["task"].strip()
    key = row["model_key"].strip()
    if task_raw in CHECKPOINT_TASKS:
        return "dropped", "checkpoint-resume functional run"
    if task_raw not in TASKS and task_raw not in LORA_TASKS:
        return "dropped", "task %r not kept" % task_raw
    task = TASKS.get(task_raw) or LORA_TASKS[task_raw]
    assumed = []
    lora_rank = 0
    if task == "lora":
        lora_rank = 16 if kind == "automodel" else 32
        assumed.append("LoRA rank %d assumed (%s default)" % (lora_rank, "AutoModel recipes'" if kind == "automodel"
                                                            else "NeMo/Megatron-Bridge"))
    document_tokens = ""
    if "packed to" in notes and "SQuAD" in notes:
        # SQuAD v1.1 paragraphs (about 120 words) with the question and NeMo's prompt: about 210 tokens a document,
        # 256 as the effective length E[L^2]/E[L] of their spread
        document_tokens = "256"
        assumed.append("packed SQuAD: documents of ~256 tokens (not published)")
    elif task in ("lora", "sft") and kind == "megatron-bridge":
        assumed.append("packing not stated: one document a sequence")

    m = re.search(r"DP\*TP\*PP=(\d+) of (\d+) allocated GPUs", notes)
    if m and int(m.group(1)) > int(m.group(2)):
        return "dropped", "inconsistent layout: DP*TP*PP=%s exceeds the %s GPUs allocated (notes)" % m.groups()
    if (kind == "automodel" and "DeepEP" in notes and (row.get("ep", "").strip() in ("", "1"))
            and integer(row.get("experts", "")) and integer(row["num_gpus"]) > 8):
        # GPT-OSS 120B on 64 GPUs: FSDP over 64 without EP would gather its 234 GB of BF16 weights at least once a
        # step, 4.6 s at 400 Gb/s per GPU, more than the 4.3 s published for the whole step
        return "dropped", ("layout not as published: kernels name DeepEP (expert parallelism) with EP 1 on several "
                           "nodes, where the FSDP weight gathers alone would exceed the step time")
    if re.search(r"footnote:[^;]*performance regression", notes, re.I):
        # the source itself says the run measured a software defect (Megatron-Bridge 26.06.01's GPT-OSS 120B: a
        # cuDNN regression "resolved with the next container release"), not what the configuration runs at
        return "dropped", ("the source's footnote names a known performance regression of this run (a defect, not "
                           "the configuration's speed)")
    status = row.get("status", "").strip()
    step = row.get("step_time_s", "").strip()
    if status != "oom" and not step:
        return "dropped", "no step time published%s" % (" (TFLOP/s only)" if "TFLOP/s only" in notes else "")

    # architecture (rule 2)
    if not key:
        return "dropped", "model %r not in models.csv (no architecture published)" % row.get("model", "")
    if key in NO_ARCHITECTURE:
        return "dropped", "no architecture published for %s (models.csv blank)" % key
    if key in UNEXPRESSIBLE:
        return "dropped", UNEXPRESSIBLE[key]
    if key not in models:
        return "dropped", "model_key %s not in models.csv" % key
    family = models[key]["family"]
    config_key = key
    model_key = key
    if key == "bloom-arch-sweep":
        arch = bloom_arch(row)
        if arch is None:
            if integer(row["hidden"]) and integer(row["layers"]):
                return "dropped", "BLOOM sweep row without heads (NHEADS not stated for this table)"
            return "dropped", "BLOOM sweep row without hidden/layers/heads (not stated for this table)"
        model_key = config_key = "bloom-h%d-l%d-a%d" % arch
        config_source = ("bloom", arch)
    elif key == "bloom-176b":
        arch = bloom_arch(row)
        m = models[key]
        if arch != (int(m["hidden"]), int(m["layers"]), int(m["heads"])):
            fail("%s:%d: bloom-176b row architecture %s differs from models.csv" % (file, line, arch))
        config_source = ("bloom", arch)
    else:
        if not models[key]["hidden"]:
            return "dropped", "no architecture published for %s (models.csv blank)" % key
        config_source = ("model", key)
        if key == "deepseek-v3":
            variant = row.get("model_variant", "")
            if "w/o MTP" in variant or kind == "automodel":
                config_key = "deepseek-v3-no-mtp"
                config_source = ("no-mtp", key)
            assumed.append("w/o MTP (page label): config without it" if "w/o MTP" in variant
                           else "AutoModel has no MTP: config without it" if kind == "automodel"
                           else "MTP 1 layer (page label)" if "w/ MTP" in variant
                           else "MTP not stated: config has 1 MTP layer")
        if key == "gpt3-175b" and kind == "nemo" and row["release"].strip().startswith("24."):
            config_key = "gpt3-175b-nemo1"
            assumed.append("NeMo 1.0 dropout 0.1")

    # layout (rule 3)
    gpus = integer(row["num_gpus"])
    tp, pp = integer(row["tp"]), integer(row["pp"])
    gbs, mbs = integer(row["gbs"]), integer(row["mbs"])
    seq = integer(row["seq"])
    if seq is None:
        m = re.search(r"tokens/s\*GPUs\*step_time/GBS = (\d+)", notes)
        if m:
            seq = int(m.group(1))
            assumed.append("seq %d derived from published tokens/s" % seq)
    if None in (tp, pp, gbs, mbs, seq, gpus):
        missing = [n for n, v in (("tp", tp), ("pp", pp), ("gbs", gbs), ("mbs", mbs), ("seq", seq),
                                  ("num_gpus", gpus)) if v is None]
        return "dropped", "layout not stated (%s missing)" % "/".join(missing)
    cp = integer(row["cp"]) or 1
    vp = integer(row["vp"]) or 1
    ep = integer(row["ep"]) or 1
    fsdp = integer(row["fsdp"]) or 0
    etp = 1
    m = re.search(r"\bETP\s*=\s*(\d+)", notes)
    if m:
        etp = int(m.group(1))
    dp = integer(row["dp"])
    if dp is None:
        if gpus % (tp * pp * cp):
            return "dropped", "inconsistent layout: %d GPUs not divisible by tp*pp*cp=%d" % (gpus, tp * pp * cp)
        dp = gpus // (tp * pp * cp)
    if dp * tp * pp * cp != gpus:
        return "dropped", "inconsistent layout: dp*tp*pp*cp=%d != num_gpus %d" % (dp * tp * pp * cp, gpus)
    ga_text = row.get("ga", "").strip()
    if gbs % (mbs * dp) == 0 and gbs // (mbs * dp) > 0:
        micro = gbs // (mbs * dp)
        lbs = re.search(r"LBS \(local batch\)=(\d+)", notes)
        if (kind == "automodel" and lbs and integer(ga_text) is not None
                and int(lbs.group(1)) * dp * integer(ga_text) == gbs):
            if integer(ga_text) != micro:
                assumed.append("GA %s x local batch %s / mbs %d = %d micro-batches" % (
                    ga_text, lbs.group(1), mbs, micro))
        elif ga_text and integer(ga_text) is not None and integer(ga_text) != micro:
            assumed.append("published GA=%s ignored (gbs/(mbs*dp)=%d)" % (ga_text, micro))
        elif ga_text and integer(ga_text) is None:
            assumed.append("published GA '%s'; used %d" % (ga_text, micro))
    else:
        ga = integer(ga_text)
        if ga and ga * mbs * dp == gbs:
            micro = ga
            assumed.append("micro_batches = published GA")
        else:
            return "dropped", "gbs/(mbs*dp)=%d/(%d*%d) is not a positive integer and no consistent GA" % (
                gbs, mbs, dp)

    # the predictor's checks (rule 13)
    try:
        shape = configs.get(config_key, config_source)[2]
    except NoRule as e:
        return "dropped", str(e)
    refusal = predictor_refusal(shape, tp, pp, vp, cp, ep, etp, dp, seq)
    if refusal:
        configs.refused.add(config_key)
        return "dropped", "predictor refuses the layout: " + refusal

    # ZeRO (rule 4)
    if kind == "automodel":
        zero = 3
        assumed.append("FSDP2 -> zero 3")
    elif kind == "bloom":
        if "ZeRO stage 0" in notes and "BF16 optimizer" not in notes:
            zero = 0
            assumed.append("ZeRO stage 0 (notes)")
        elif "ZeRO stage 0 with BF16 optimizer" in notes:
            zero = 1
            assumed.append("BF16 optimizer = ZeRO-1 equivalent (slurm)")
        else:
            zero = 1
    else:
        zero = 3 if fsdp > 0 else 1
        if fsdp > 0:
            assumed.append("FSDP=%d -> zero 3" % fsdp)

    # the gradients' reduction (rule 4, continued): after the backward pass for BLOOM and any other DeepSpeed stack
    # its source or system names (a note comparing with DeepSpeed does not count; ZeRO 3's own collectives aside)
    deepspeed = re.search(r"deepspeed", " ".join((row["source"], row["system"])), re.IGNORECASE)
    grad_reduce = "after-backward" if (kind == "bloom" or deepspeed) and zero != 3 else "overlapped"

    # device (rule 5)
    gpu = row["gpu"].strip()
    if gpu not in DEVICES:
        return "dropped", "gpu %r is not in the converter's device table (DEVICES: %s)" % (
            gpu, ", ".join(sorted(DEVICES)))
    device = DEVICES[gpu]

    # precision (rule 6)
    precision, why = precision_of(row)
    if precision is None:
        return "dropped", why
    if why:
        assumed.append(why)

    # gradient buffers (rule 4, continued): NeMo 1.x (the 24.xx releases) trains with Apex's distributed Adam
    # synchronising gradients in BF16 (the launcher's optim.grad_sync_dtype bf16); the performance scripts of
    # Megatron-Bridge (every release; the cards' pretrain_performance runs too) and of NeMo 2 (FP8 recipes from the
    # first, every recipe from 25.07) set grad_reduce_in_fp32 false: 16-bit gradient buffers; FP16 training under
    # Megatron-LM and DeepSpeed keeps FP16 ones; every other stack keeps FP32 main gradients (Megatron-LM's BF16
    # default, the recipes' own, FSDP2's reduce_dtype)
    grad_dtype = "fp32"
    version = re.search(r"(?<![\d.])(\d{2})\.(\d{2})(?!\d)", row["release"])
    version = (int(version.group(1)), int(version.group(2))) if version else None
    bridge = short == "mbps" or re.search(r"\bbridge\b", row["source"], re.IGNORECASE)
    half = "fp16" if precision == "fp16" else "bf16"
    if kind == "nemo" and version is not None and version[0] == 24:
        grad_dtype = "bf16"
        assumed.append("bf16 gradients (NeMo 1.x distributed Adam)")
    elif (kind == "megatron-bridge" and bridge) or (kind == "card" and task == "pretrain_performance") or (
            kind == "nemo" and version is not None and (precision not in ("bf16", "fp16") or version >= (25, 7))):
        grad_dtype = half
        assumed.append("%s gradients (performance scripts: grad_reduce_in_fp32 false)" % half)
    elif precision == "fp16" and kind not in ("automodel", "card"):
        # FP16 training under Megatron-LM (without --accumulate-allreduce-grads-in-fp32) and DeepSpeed (BLOOM's
        # Megatron-DeepSpeed): FP16 gradients, reduced in FP16 (DeepSpeed's communication_data_type); DeepSpeed's
        # BF16 optimizer accumulates and reduces FP32 gradients
        grad_dtype = "fp16"

    # recomputation and sequence parallelism (rules 7, 8)
    if kind == "bloom":
        recompute = "full"
        assumed.append("full recompute (checkpoint-activations)")
        sp = False
    else:
        recompute = "auto"
        if kind == "automodel":
            sp = bool(re.search(r"sequence[ -]parallel", notes, re.IGNORECASE))
        else:
            sp = tp > 1

    # measurement (rule 9)
    tflops = row.get("tflops_per_gpu", "").strip()
    if kind == "bloom" and tflops:
        assumed.append("hw TFLOPs %s (not model TFLOPs)" % tflops)
        tflops = ""
    if status == "oom":
        destination = "oom"
        measured = ""
    else:
        measured = number_text(float(step) * 1000.0)
        if status == "superseded":
            destination = "superseded"
        elif kind == "card":
            destination = "cards"
        elif task == "lora":
            destination = "lora"
        elif status in ("current", ""):
            destination = "runs"
        else:
            return "dropped", "status %r not used" % status
    if kind == "card":
        assumed.append("functional card run" if "functional" in notes else "canonical perf recipe (mock data)")
    if "derived" in row.get("step_time_source", ""):
        assumed.append("step time derived from tokens/s")

    values = {
        "source": row["source"].strip(),
        "release": row["release"].strip(),
        "task": task,
        "system": row["system"].strip(),
        "model_key": model_key,
        "family": family,
        "transformer": "configs/%s/config.json" % config_key,
        "seq": str(seq), "batch": str(mbs), "micro_batches": str(micro), "world_size": str(dp),
        "tensor": str(tp), "pipeline": str(pp), "context": str(cp), "virtual_stages": str(vp),
        "expert": str(ep), "expert_tensor": str(etp), "zero_stage": str(zero), "device": device,
        "gpus_per_node": row["gpus_per_node"].strip(), "nvlink_domain": row["nvlink_domain"].strip(),
        "inter_node_gbps": "400" if kind == "bloom" else "",
        "precision": precision, "recompute": recompute, "recompute_modules": "", "recompute_layers": "",
        "offload_layers": "",
        "sequence_parallel": "true" if sp else "false",
        "lora_rank": str(lora_rank),
        "document_tokens": document_tokens,
        "grad_dtype": grad_dtype,
        "grad_reduce": grad_reduce,
        "uneven_pipeline": "false" if even_split_exists(configs.get(config_key, config_source)[2]["layers"], pp * vp,
                                                        configs.get(config_key, config_source)[2]["mtp"]) else "true",
        "measured_ms": measured, "tokens_per_s_per_gpu": row.get("tokens_per_s_per_gpu", "").strip(),
        "model_tflops_per_gpu": tflops,
    }
    if kind == "automodel" and ep > 1 and re.search(r"kernel optimizations:[^;]*\bDeepEP\b", notes):
        # the page's kernel list names DeepEP: the token dispatcher (rule 15's table may name another)
        values["moe_dispatcher"] = "deepep"
    note = "%s:%d" % (NOTE_PREFIX.get(file, short), line)
    for a in assumed:
        if len(note) + 2 + len(a) > 200:
            break
        note += "; " + a
    values["notes"] = note
    group_key = (model_key, config_key, row.get("model_variant", "").strip(), values["system"], gpus, precision,
                 seq, gbs, mbs, tp, pp, cp, vp, ep, zero == 3, task)
    id_prefix = "-".join([short, release_short(values["release"]), SYSTEM_SHORT[device], str(gpus), model_key,
                          precision])
    result = Row(file, line, values, group_key, id_prefix)
    result.config_key = config_key
    return destination, result


# ---------------------------------------------------------------------------------------------------- configs

def models_int(m, column):
    v = m[column].strip()
    return int(v) if v else None


class NoRule(Exception):
    """An architecture models.csv describes that the converter has no configuration rule for."""


def build_config(key, kind, detail, models, zoo):
    """(config dict or raw bytes, provenance line) for one configs/<key> folder."""
    if kind == "no-mtp":
        cfg, line = build_config(detail, "model", detail, models, zoo)
        cfg = json.loads(cfg) if isinstance(cfg, bytes) else dict(cfg)
        cfg["num_nextn_predict_layers"] = 0
        return cfg, ("%s: the %s configuration with num_nextn_predict_layers 0, for the runs without the "
                     "multi-token-prediction module (pages labelled \"w/o MTP\"; NeMo AutoModel, which has none)."
                     % (key, detail))
    if kind == "bloom":
        h, l, a = detail
        cfg = {"model_type": "gpt2", "architectures": ["GPT2LMHeadModel"], "n_embd": h, "n_layer": l, "n_head": a,
               "n_inner": 4 * h, "n_positions": 2048, "vocab_size": 250880, "activation_function": "gelu",
               "attn_pdrop": 0.1, "resid_pdrop": 0.1, "embd_pdrop": 0.1, "layer_norm_epsilon": 1e-05,
               "tie_word_embeddings": True, "_attn_implementation": "eager"}
        src = ("models.csv bloom-176b (hidden/layers/heads, ffn=4h, vocab 250880, seq 2048)" if key == "bloom-176b"
               else "hidden/layers/heads of the bloom_176b_chronicles.csv rows; ffn=4h, vocab 250880 and seq 2048 "
                    "from models.csv bloom-arch-sweep")
        line = ("%s: gpt2 keys from %s; attn/resid/embd dropout 0.1 (tr11-176B-ml/README.md: \"The default "
                "Megatron-LM dropout settings are inherited: --attention-dropout 0.1 --hidden-dropout 0.1\"; the "
                "embedding dropout is the hidden one); eager attention (2022 Megatron-DeepSpeed: unfused attention, "
                "fused softmax kernel); not expressible: ALiBi (n_positions 2048 adds a learned position table "
                "BLOOM does not have), the embedding LayerNorm; tied embeddings." % (key, src))
        return cfg, line
    model = detail
    m = models[model]
    h, l, a, kv = (models_int(m, c) for c in ("hidden", "layers", "heads", "kv_heads"))
    head_dim, ffn, moe_ffn = models_int(m, "head_dim"), models_int(m, "ffn"), models_int(m, "moe_ffn")
    vocab = models_int(m, "vocab")
    if model in REUSED and key == model:
        path = zoo / REUSED[model] / "config.json"
        if not path.is_file():
            fail("missing reused configuration %s" % path)
        raw = path.read_bytes()
        cfg = json.loads(raw)
        text = cfg.get("text_config", cfg)
        got = (text.get("hidden_size"), text.get("num_hidden_layers"), text.get("num_attention_heads"),
               text.get("num_key_value_heads"))
        want = (h, l, a, kv)
        if got != want:
            fail("%s: reused %s has hidden/layers/heads/kv %s, models.csv %s" % (key, path, got, want))
        notes = []
        if vocab is not None and text.get("vocab_size") != vocab:
            notes.append("vocab_size %s -> %d (models.csv: the run's vocabulary: %s)" % (
                text.get("vocab_size"), vocab, m["extra"] or m["source"]))
            text["vocab_size"] = vocab
        rel = "scaledl-core/src/test/resources/transformers/%s/config.json" % REUSED[model]
        if notes:
            return cfg, "%s: %s with %s; hidden/layers/heads/KV heads checked against models.csv." % (
                key, rel, "; ".join(notes))
        vocab_note = "" if vocab is not None else " (models.csv gives no vocabulary; the HF one is kept)"
        return raw, "%s: %s verbatim; hidden/layers/heads/KV heads%s checked against models.csv%s." % (
            key, rel, " and vocabulary" if vocab is not None else "", vocab_note)
    if model in ("llama2-7b", "llama2-13b", "llama2-70b"):
        cfg = {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": h,
               "intermediate_size": ffn, "num_attention_heads": a, "num_key_value_heads": kv,
               "num_hidden_layers": l, "vocab_size": vocab, "max_position_embeddings": models_int(m, "default_seq"),
               "hidden_act": "silu", "rms_norm_eps": 1e-05, "rope_theta": 10000.0, "attention_bias": False,
               "attention_dropout": 0.0, "tie_word_embeddings": False, "torch_dtype": "bfloat16"}
        if head_dim and head_dim != h // a:
            cfg["head_dim"] = head_dim
        return cfg, ("%s: llama keys from models.csv %s (hidden, ffn, heads, kv_heads, layers, vocab, default_seq; "
                     "%s); rms_norm_eps 1e-5, rope_theta 10000 and no dropout as in the public Llama-2 configs "
                     "(assumed for the NeMo runs)." % (key, model, m["source"]))
    if model in ("gpt3-5b", "gpt3-20b", "gpt3-175b"):
        dropout = 0.0 if key == "gpt3-175b" else 0.1
        cfg = {"model_type": "gpt2", "architectures": ["GPT2LMHeadModel"], "n_embd": h, "n_layer": l, "n_head": a,
               "n_inner": ffn, "n_positions": models_int(m, "default_seq"), "vocab_size": vocab,
               "activation_function": "gelu_new", "attn_pdrop": dropout, "resid_pdrop": dropout,
               "embd_pdrop": dropout, "layer_norm_epsilon": 1e-05, "tie_word_embeddings": True,
               "_attn_implementation": "flash_attention_2"}
        if key == "gpt3-175b":
            why = ("dropout 0.0: NeMo 2.0 GPTConfig175B sets hidden_dropout=0.0 and attention_dropout=0.0 "
                   "(github:NVIDIA/NeMo nemo/collections/llm/gpt/model/base.py); used by the NeMo 2.0 rows (25.02, "
                   "25.04)")
        elif key == "gpt3-175b-nemo1":
            why = ("dropout 0.1: the NeMo 24.07 rows ran the NeMo 1.0 launcher, whose "
                   "conf/training/gpt3/175b.yaml sets hidden_dropout 0.1 and attention_dropout 0.1 "
                   "(github:NVIDIA/NeMo-Framework-Launcher); vocabulary uncertain (models.csv: GPT-2 BPE 50257 "
                   "padded in 24.07; 51200 kept)")
        else:
            why = ("dropout 0.1: NeMo 1.0 launcher conf/training/gpt3/%s.yaml (hidden_dropout 0.1, "
                   "attention_dropout 0.1; the NeMo 2.0 GPTConfig%s inherits Megatron core's 0.1 defaults); "
                   "vocabulary uncertain for the 24.07 rows (models.csv)" % (model[5:], model[5:].upper()))
        return cfg, ("%s: gpt2 keys from models.csv %s (hidden, layers, heads, ffn -> n_inner, default_seq -> "
                     "n_positions, vocab; %s); gelu_new; flash_attention_2 (NeMo/Transformer Engine fused "
                     "attention); tied embeddings (NeMo GPTConfig share_embeddings_and_output_weights); %s." % (
                         key, model, m["source"], why))
    if model == "mixtral-8x22b":
        cfg = {"architectures": ["MixtralForCausalLM"], "model_type": "mixtral", "hidden_size": h,
               "intermediate_size": moe_ffn, "num_attention_heads": a, "num_key_value_heads": kv,
               "num_hidden_layers": l, "num_local_experts": models_int(m, "experts"),
               "num_experts_per_tok": models_int(m, "topk"), "vocab_size": vocab, "max_position_embeddings": 65536,
               "hidden_act": "silu", "rms_norm_eps": 1e-05, "rope_theta": 1000000.0, "sliding_window": None,
               "attention_dropout": 0.0, "tie_word_embeddings": False, "torch_dtype": "bfloat16"}
        return cfg, ("%s: mixtral keys from models.csv (hidden, layers, heads, kv_heads, moe_ffn -> "
                     "intermediate_size, experts, topk, vocab; %s); rms_norm_eps, rope_theta, 65536 positions and "
                     "no sliding window as in the public Mixtral-8x22B config (assumed)." % (key, m["source"]))
    if model in ("qwen2.5-7b", "qwen2.5-32b"):
        cfg = {"architectures": ["Qwen2ForCausalLM"], "model_type": "qwen2", "hidden_size": h,
               "intermediate_size": ffn, "num_attention_heads": a, "num_key_value_heads": kv,
               "num_hidden_layers": l, "vocab_size": vocab, "hidden_act": "silu", "rms_norm_eps": 1e-06,
               "rope_theta": 1000000.0, "attention_dropout": 0.0, "use_sliding_window": False,
               "sliding_window": None, "tie_word_embeddings": False, "torch_dtype": "bfloat16"}
        return cfg, "%s: qwen2 keys from models.csv (%s)." % (key, m["source"])
    if model.startswith("nemotron3-") or model.startswith("nemotron4-"):
        cfg = {"architectures": ["NemotronForCausalLM"], "model_type": "nemotron", "hidden_size": h,
               "intermediate_size": ffn, "num_attention_heads": a, "num_key_value_heads": kv, "head_dim": head_dim,
               "num_hidden_layers": l, "vocab_size": vocab, "hidden_act": "relu2",
               "max_position_embeddings": models_int(m, "default_seq"), "norm_eps": 1e-05,
               "partial_rotary_factor": 0.5, "attention_dropout": 0.0, "tie_word_embeddings": False,
               "torch_dtype": "bfloat16"}
        return cfg, ("%s: nemotron keys from models.csv (hidden, ffn, heads, kv_heads, head_dim, layers, vocab; %s); "
                     "norm_eps, partial_rotary_factor 0.5 and untied embeddings as in the public Nemotron-4 "
                     "configs (assumed)." % (key, m["source"]))
    if model.startswith("mlm-gpt-"):
        cfg = {"model_type": "gpt2", "architectures": ["GPT2LMHeadModel"], "n_embd": h, "n_layer": l, "n_head": a,
               "n_inner": ffn, "n_positions": models_int(m, "default_seq"), "vocab_size": vocab,
               "activation_function": "gelu", "attn_pdrop": 0.1, "resid_pdrop": 0.1, "embd_pdrop": 0.1,
               "layer_norm_epsilon": 1e-05, "tie_word_embeddings": True, "_attn_implementation": "flash_attention_2"}
        return cfg, ("%s: gpt2 keys from models.csv %s (hidden, layers, heads, ffn -> n_inner (models.csv: 4 x hidden "
                     "ASSUMED, not published), default_seq -> n_positions, vocab; %s); ASSUMED from Megatron-LM's "
                     "defaults, which the table does not state: GELU, dropout 0.1 (--attention-dropout, "
                     "--hidden-dropout), tied embeddings (untied only with --untie-embeddings-and-output-weights), "
                     "Transformer Engine's fused attention." % (key, model, m["source"]))
    if model == "kimi-k2":
        cfg = {"architectures": ["DeepseekV3ForCausalLM"], "model_type": "deepseek_v3", "hidden_size": h,
               "intermediate_size": ffn, "moe_intermediate_size": moe_ffn, "num_hidden_layers": l,
               "num_attention_heads": a, "num_key_value_heads": a, "n_routed_experts": models_int(m, "experts"),
               "n_shared_experts": 1, "num_experts_per_tok": models_int(m, "topk"), "first_k_dense_replace": 1,
               "moe_layer_freq": 1, "q_lora_rank": 1536, "kv_lora_rank": 512, "qk_nope_head_dim": 128,
               "qk_rope_head_dim": 64, "v_head_dim": 128, "vocab_size": vocab, "topk_method": "noaux_tc",
               "n_group": 1, "topk_group": 1, "routed_scaling_factor": 2.827, "scoring_func": "sigmoid",
               "norm_topk_prob": True, "num_nextn_predict_layers": 0, "hidden_act": "silu", "rms_norm_eps": 1e-06,
               "rope_theta": 50000.0, "max_position_embeddings": 4096, "attention_bias": False,
               "attention_dropout": 0.0, "tie_word_embeddings": False, "torch_dtype": "bfloat16"}
        return cfg, ("%s: deepseek_v3 keys from models.csv kimi-k2 (hidden, layers, heads, ffn, moe_ffn, experts 384, "
                     "topk 8, 60 MoE layers after 1 dense, vocab 163840) and the zoo config it cites "
                     "(github:yanring/Megatron-MoE-ModelZoo@e865051 model_configs/benchmarking/Kimi-K2.yaml: q_lora "
                     "1536, kv_lora 512, qk-head-dim 128, qk-pos-emb-head-dim 64, v-head-dim 128, one shared expert "
                     "of 2048, sigmoid router with expert bias, 1 group, scaling 2.827, rotary base 50000, dropout "
                     "0, untied); no MTP layer (none in the zoo config)." % key)
    if model == "nemotron-3-super-120b-a12b":
        pattern = re.search(r"pattern ([ME*\-]+)", m["moe_layers"]).group(1)
        if len(pattern) != l:
            fail("nemotron-3-super pattern has %d layers, models.csv %d" % (len(pattern), l))
        cfg = {"architectures": ["NemotronHForCausalLM"], "model_type": "nemotron_h", "hidden_size": h,
               "num_hidden_layers": l, "hybrid_override_pattern": pattern, "num_attention_heads": a,
               "num_key_value_heads": kv, "head_dim": head_dim, "mamba_num_heads": 128, "mamba_head_dim": 64,
               "ssm_state_size": 128, "n_groups": 8, "conv_kernel": 4, "chunk_size": 128, "expand": 2,
               "intermediate_size": moe_ffn, "moe_intermediate_size": moe_ffn,
               "moe_shared_expert_intermediate_size": models_int(m, "shared_expert_ffn"),
               "n_routed_experts": models_int(m, "experts"), "num_experts_per_tok": models_int(m, "topk"),
               "n_shared_experts": 1, "moe_latent_size": 1024, "routed_scaling_factor": 5.0,
               "norm_topk_prob": True, "mlp_hidden_act": "relu2", "mamba_hidden_act": "silu",
               "vocab_size": 131072, "max_position_embeddings": 8192, "attention_bias": False, "mlp_bias": False,
               "use_bias": False, "use_conv_bias": True, "mamba_proj_bias": False, "attention_dropout": 0.0,
               "hidden_dropout": 0.0, "layer_norm_epsilon": 1e-05, "tie_word_embeddings": False,
               "torch_dtype": "bfloat16"}
        return cfg, ("%s: nemotron_h keys from models.csv (hidden 4096, 88 layers and hybrid_override_pattern, heads "
                     "32, kv_heads 2, head_dim 128, moe_ffn 2688, shared_expert_ffn 5376, experts 512, topk 22, "
                     "squared ReLU, LatentMoE latent 1024, Mamba-2 128 heads x 64; %s, which also gives untied "
                     "embeddings, dropout 0 and router scaling 5.0); ASSUMED: ssm_state_size 128 and n_groups 8 "
                     "(not stated; Megatron core's Mamba defaults, as in Nemotron-3-Nano), conv_kernel 4 and chunk "
                     "128 (Nano's), vocab_size 131072 (NeMo NemotronHConfigBase default; models.csv: not stated); "
                     "the MTP layer of the MB recipes is not expressible in nemotron_h." % (key, m["source"]))
    raise NoRule("no configuration rule for %s (model %s) in convert.py's build_config" % (key, model))


# ---------------------------------------------------------------------------------------------------- output

RECIPE_SETTINGS = Path(__file__).resolve().with_name("recipe_settings.csv")


def read_recipe_settings(path=RECIPE_SETTINGS):
    """The settings read from the recipe code behind the published rows, by the id this converter gives a row."""
    if not path.is_file():
        fail("%s: not found (the recipe settings of rule 15, kept beside this script)" % path)
    settings = {}
    with open(path, newline="", encoding="utf-8") as f:
        for line, r in enumerate(csv.DictReader(f), start=2):
            if r["id"] in settings:
                fail("%s:%d: id %s given twice" % (path, line, r["id"]))
            settings[r["id"]] = r
    return settings


def cuda_graphs_of(setting):
    """Rule 15: a recipe's ``cuda_graph_impl`` and ``cuda_graph_scope`` as the run files' ``cuda_graphs``."""
    impl = setting.get("cuda_graph_impl", "").strip().lower()
    scope = setting.get("cuda_graph_scope", "").strip().lower()
    if impl in ("", "none"):
        return "none" if impl == "none" else ""
    if impl == "local" and scope == "full_iteration":
        return "iteration"
    if impl == "transformer_engine" or (impl == "local" and scope in ("transformer_layer", "full_layer")):
        return "layers"
    fail("recipe settings: CUDA graphs %r of scope %r: no rule maps them to cuda_graphs" % (impl, scope))


def apply_recipe_settings(outputs, settings):
    """Rule 15: ``moe_a2a_overlap`` of the rows with expert parallelism whose recipe code says it, and every named
    row's ``cuda_graphs``."""
    written = {r.values["id"] for rows in outputs.values() for r in rows}
    unused = sorted(set(settings) - written)
    if unused:
        print("convert.py: recipe settings: %d ids name no written row (%s)" % (len(unused),
              ", ".join(unused[:5]) + (", ..." if len(unused) > 5 else "")), file=sys.stderr)
    for rows in outputs.values():
        for r in rows:
            s = settings.get(r.values["id"], {})
            a2a = s.get("moe_a2a_overlap", "").strip().lower()
            if int(r.values["expert"]) > 1 and a2a in ("true", "false"):
                r.values["moe_a2a_overlap"] = a2a
                note = "all-to-all %s (recipe code)" % ("overlapped" if a2a == "true" else "not overlapped")
                if len(r.values["notes"]) + 2 + len(note) <= 200:
                    r.values["notes"] += "; " + note
            else:
                r.values["moe_a2a_overlap"] = ""
            r.values["moe_dispatcher"] = dispatcher_of(r, s)
            r.values["cuda_graphs"] = cuda_graphs_of(s)
            r.values["fp8_param_gather"] = fp8_param_gather_of(r, s)
            r.values["grad_reduce"] = grad_reduce_of(r, s)
            recompute_of(r, s)
            offload_of(r, s)


def fp8_param_gather_of(r, setting):
    """Rule 15: ``true`` where the recipe keeps its low-precision linear weights in their format alone
    (``--fp8-param-gather``) and the row can run it as the predictor models it; else empty."""
    other = setting.get("other", "").lower()
    said = re.search(r"fp8_param_gather\s*=\s*true|fp8_params\s*=\s*true|mxfp8 param gather"
                     r"|mxfp8 fp8_param_gather(?!\s*=\s*false)", other)
    refused = re.search(r"fp8_param_gather\s*=\s*false|fp8_params\s*=\s*false|fp8_param_gather forced false", other)
    runs = (r.values.get("precision") in ("fp8", "fp8-block", "mxfp8")
            and r.values.get("zero_stage") in ("1", "2") and r.values.get("lora_rank", "0") in ("", "0")
            and r.values.get("task", "") != "lora")
    return "true" if said and not refused and runs else ""


def grad_reduce_of(r, setting):
    """Rule 15: ``gather-after-step`` where the recipe turns Megatron core's ``overlap_param_gather`` off (the
    distributed optimizer then gathers the updated weights after its step, exposed) on a row whose gradients'
    reduction is overlapped and which runs the distributed optimizer (ZeRO 1 or 2); else the row's own."""
    other = setting.get("other", "").lower()
    off = re.search(r"(?<!_)overlap_param_gather\s*=\s*false", other)
    if off and r.values.get("grad_reduce") == "overlapped" and r.values.get("zero_stage") in ("1", "2"):
        return "gather-after-step"
    return r.values.get("grad_reduce", "")


def dispatcher_of(r, setting):
    """Rule 15: the recipe's MoE token dispatcher for a row with expert parallelism (empty: all-to-all); where the
    table names none, the one the row's own source names (AutoModel's kernel list)."""
    d = setting.get("moe_dispatcher", "").strip().lower()
    if d in ("", "-"):
        d = r.values.get("moe_dispatcher", "")
    if int(r.values.get("expert", "1") or 1) <= 1 or d in ("", "-"):
        return ""
    if d not in ("alltoall", "allgather", "deepep", "hybridep"):
        fail("recipe settings: MoE dispatcher %r of %s: no rule maps it" % (d, r.values["id"]))
    return d


def offload_of(r, setting):
    """Rule 15: the layers whose activations the recipe offloads to the host, where the table is confident of them."""
    text = setting.get("cpu_offload", "").strip()
    if not text or setting.get("confidence", "").strip().lower() not in ("high", "medium"):
        return
    m = re.match(r"(\d+)(?: layers \(activation offload(?:;[^)]*)?\))?$", text)
    if not m:
        fail("recipe settings: cpu_offload %r of %s: no rule maps it" % (text, r.values["id"]))
    r.values["offload_layers"] = m.group(1)


def recompute_of(r, setting):
    """Rule 15: the recipe's recomputation, where the table is confident of it (high or medium)."""
    text = setting.get("recompute", "").strip().lower()
    if setting.get("confidence", "").strip().lower() not in ("high", "medium") or text in ("", "unknown"):
        return
    kind, _, rest = text.partition(":")
    if kind == "none" and not rest:
        r.values["recompute"] = "none"
    elif kind == "selective" and rest:
        r.values["recompute"] = "selective"
        r.values["recompute_modules"] = rest
    elif kind == "full" and rest.startswith("block:") and rest[6:].isdigit():
        r.values["recompute"] = "full"
        r.values["recompute_layers"] = rest[6:]
    elif kind == "full" and rest == "all":
        r.values["recompute"] = "full"
        r.values["recompute_layers"] = ""
    else:
        fail("recipe settings: recompute %r of %s: no rule maps it" % (text, r.values["id"]))


def write_csv(path, header, rows):
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(header)
    for r in rows:
        w.writerow(r)
    path.write_text(buf.getvalue(), encoding="utf-8")


def assign_weights(rows):
    counts = {}
    for r in rows:
        counts[r.group_key] = counts.get(r.group_key, 0) + 1
    for r in rows:
        r.values["fit_weight"] = weight_text(1.0 / counts[r.group_key])


def main():
    here = Path(__file__).resolve()
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--source", required=True, help="the llm-public folder (read only)")
    parser.add_argument("--out", required=True, help="the output folder (datasets/gpu/llm-public)")
    parser.add_argument("--allow-missing", action="store_true",
                        help="convert the row files present when some of the known ones are missing")
    parser.add_argument("--zoo", default=str(here.parents[2] / "scaledl-core/src/test/resources/transformers"),
                        help="folder of Hugging Face configs to reuse")
    args = parser.parse_args()
    source, out, zoo = Path(args.source), Path(args.out), Path(args.zoo)
    for name in ["README.md", "models.csv"]:
        if not (source / name).is_file():
            fail("missing input file %s" % (source / name))
    row_files = list(ROW_FILES) + other_row_files(source)
    if not any((source / f).is_file() for f, _, _ in row_files):
        fail("none of the row files (%s) in %s" % (", ".join(f for f, _, _ in ROW_FILES), source))
    missing = [f for f, _, _ in ROW_FILES if not (source / f).is_file()]
    if missing and not args.allow_missing:
        fail("missing row files in %s: %s (pass --allow-missing to convert the tables present only)" % (
            source, ", ".join(missing)))
    if not zoo.is_dir():
        fail("missing configuration folder %s" % zoo)

    models = {r["model_key"]: r for _, r in read_rows(source / "models.csv")}
    configs = Configs(models, zoo)
    outputs = {"runs": [], "superseded": [], "cards": [], "oom": [], "lora": []}
    dropped = []
    input_counts = {}
    for file, short, kind in row_files:
        if not (source / file).is_file():
            print("convert.py: %s not in %s: skipped (--allow-missing)" % (file, source), file=sys.stderr)
            input_counts[file] = 0
            continue
        rows = read_rows(source / file)
        input_counts[file] = len(rows)
        for line, row in rows:
            destination, result = convert_row(file, short, kind, line, row, models, configs)
            if destination == "dropped":
                dropped.append([file, str(line), row["model_key"].strip(), result])
            else:
                outputs[destination].append(result)
                configs.used.add(result.config_key)

    # every architecture models.csv describes gets its configuration, named or not by a row here, so that
    # tables of the same sources can name configs/<model_key>/config.json
    for key, m in sorted(models.items()):
        if key in NO_ARCHITECTURE or key in UNEXPRESSIBLE or key == "bloom-arch-sweep" or not m["hidden"]:
            continue
        try:
            configs.get(key, ("bloom", bloom_arch_of_model(m)) if key == "bloom-176b" else ("model", key))
        except NoRule as e:
            print("convert.py: %s: no configuration written" % e, file=sys.stderr)
            configs.norule.add(key)
            continue
        configs.catalog.add(key)

    # ids (rule 13) and weights (rule 11)
    seen = {}
    for name in ("runs", "superseded", "cards", "oom", "lora"):
        for r in outputs[name]:
            seen[r.id_prefix] = seen.get(r.id_prefix, 0) + 1
            r.values["id"] = "%s-%d" % (r.id_prefix, seen[r.id_prefix])
        assign_weights(outputs[name])
    apply_recipe_settings(outputs, read_recipe_settings())

    out.mkdir(parents=True, exist_ok=True)
    configs_dir = out / "configs"
    if configs_dir.exists():
        shutil.rmtree(configs_dir)
    provenance_lines = []
    for key in sorted(configs.used | configs.refused | configs.catalog):
        cfg, line, _ = configs.cache[key]
        if key in configs.catalog and key not in configs.used | configs.refused:
            line += (" No row of these tables names it: written because models.csv describes it, for tables of the "
                     "same sources.")
        elif key not in configs.used:
            line += (" No written row names it yet: every row of this architecture is refused by the predictor's "
                     "layout checks (dropped.csv); kept for when the predictor accepts those layouts.")
        folder = configs_dir / key
        folder.mkdir(parents=True)
        if isinstance(cfg, bytes):
            (folder / "config.json").write_bytes(cfg)
        else:
            (folder / "config.json").write_text(json.dumps(cfg, indent=2) + "\n", encoding="utf-8")
        provenance_lines.append("- `" + line.replace(": ", "`: ", 1))

    for name in ("runs", "superseded", "cards", "oom", "lora"):
        write_csv(out / ("%s.csv" % name), COLUMNS, [[r.values[c] for c in COLUMNS] for r in outputs[name]])
    write_csv(out / "dropped.csv", ["file", "line", "model_key", "reason"], dropped)
    shutil.copyfile(source / "README.md", out / "README-source.md")
    shutil.copyfile(source / "models.csv", out / "models.csv")
    write_provenance(out, outputs, dropped, input_counts, provenance_lines, row_files, missing)
    print("runs %d, superseded %d, cards %d, oom %d, lora %d, dropped %d, configs %d" % (
        len(outputs["runs"]), len(outputs["superseded"]), len(outputs["cards"]), len(outputs["oom"]),
        len(outputs["lora"]),
        len(dropped), len(configs.used | configs.refused | configs.catalog)))


def table_kind(source_text):
    """The rules (kind) of a table from its ``source`` column's words: AutoModel, BLOOM, verification cards, NeMo
    (not Megatron-Bridge), else Megatron core's defaults (``megatron-bridge``)."""
    t = source_text.lower()
    if re.search(r"\bautomodel\b", t):
        return "automodel"
    if re.search(r"\bbloom\b", t):
        return "bloom"
    if re.search(r"\bverification[ -]cards?\b", t):
        return "card"
    if re.search(r"\bnemo\b", t) and not re.search(r"\bbridge\b", t):
        return "nemo"
    return "megatron-bridge"


def other_row_files(source):
    """Row files of the same columns beside the known ones (another table of the same sources): (file, short, kind),
    the kind read from their ``source`` column (``table_kind``).  A CSV without the row columns is named on stderr and skipped, never silently."""
    known = {f for f, _, _ in ROW_FILES} | {"models.csv"}
    found = []
    for path in sorted(source.glob("*.csv")):
        if path.name in known:
            continue
        try:
            rows = read_rows(path)
        except SystemExit:
            print("convert.py: %s is not a row file (see above): skipped" % path.name, file=sys.stderr)
            continue
        header = set(rows[0][1]) if rows else set()
        missing = [c for c in SOURCE_COLUMNS if c not in header]
        if not rows or missing:
            print("convert.py: %s is not a row file (%s): skipped" % (
                path.name, "no rows" if not rows else "no column " + ", ".join(missing)), file=sys.stderr)
            continue
        kind = table_kind(" ".join(r.get("source", "") for _, r in rows[:5]))
        short = slug(path.stem)
        found.append((path.name, short, kind))
        print("convert.py: %s read as a table of kind %s" % (path.name, kind), file=sys.stderr)
    return found


def write_provenance(out, outputs, dropped, input_counts, config_lines, row_files=ROW_FILES, missing=()):
    total_in = sum(input_counts.values())
    total_out = sum(len(v) for v in outputs.values()) + len(dropped)
    if total_in != total_out:
        fail("%d input rows but %d written" % (total_in, total_out))
    reasons = {}
    for _, _, _, reason in dropped:
        reasons[reason] = reasons.get(reason, 0) + 1
    per_file = {}
    for name, rows in outputs.items():
        for r in rows:
            per_file.setdefault(r.file, {}).setdefault(name, 0)
            per_file[r.file][name] += 1
    for f, _, _, _ in dropped:
        per_file.setdefault(f, {}).setdefault("dropped", 0)
        per_file[f]["dropped"] += 1
    doc = __doc__
    rules = doc[doc.index("Rules, in the order"):doc.index("Configurations:")].strip()
    rules = "\n".join(rules.splitlines()[2:])
    lines = [
        "# llm-public: published LLM training step times as job runs tables",
        "",
        "Published measurements of large-model training on GPU clusters (8 to 1,024 GPUs: DGX-H100, DGX-B200, "
        "DGX-GB200 NVL72, and BLOOM-176B's A100-80GB cluster), converted from `shared/data/llm-public` (its README "
        "is copied as `README-source.md`, its architecture table as `models.csv`) into the *job runs table* format "
        "of `org.scaledl.io.JobRuns`, with a Hugging Face `config.json` per model under `configs/`.",
        "",
        "Regenerate (from the repository root):",
        "",
        "```",
        "python3 tools/llm-public/convert.py --source ../shared/data/llm-public --out datasets/gpu/llm-public",
        "```",
        "",
        "## Files",
        "",
        "| file | rows | what |",
        "|---|---:|---|",
        "| `runs.csv` | %d | usable published measurements (pre-training, SFT, long context); fit on these, "
        "weighted by `fit_weight` |" % len(outputs["runs"]),
        "| `superseded.csv` | %d | earlier published values of configurations whose current value is in "
        "`runs.csv` (noise between page versions, not extra data) |" % len(outputs["superseded"]),
        "| `cards.csv` | %d | Megatron-Bridge verification cards that are expressible (mostly functional runs, "
        "not tuned; `notes` says which) |" % len(outputs["cards"]),
        "| `oom.csv` | %d | BLOOM configurations published as out of memory (`measured_ms` empty) |"
        % len(outputs["oom"]),
        "| `lora.csv` | %d | LoRA fine-tuning runs, kept apart: a held-out check of the frozen-weight physics, never "
        "fitted on |" % len(outputs["lora"]),
        "| `dropped.csv` | %d | every other input row, with the reason |" % len(dropped),
        "| `configs/` | %d | Hugging Face `config.json` files the rows name (`transformer`), and of architectures "
        "whose every row the predictor refuses, and of every other architecture `models.csv` describes |"
        % len(config_lines),
        "",
        "Input rows per source file and where they went (%d in all, every one accounted for):" % total_in,
        "",
        "| source file | rows | runs | superseded | cards | oom | lora | dropped | source and licence |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    for f, _, _ in row_files:
        c = per_file.get(f, {})
        lines.append("| `%s` | %d | %d | %d | %d | %d | %d | %d | %s |" % (
            f, input_counts[f], c.get("runs", 0), c.get("superseded", 0), c.get("cards", 0), c.get("oom", 0),
            c.get("lora", 0), c.get("dropped", 0),
            ("**not in the source folder** (converted with --allow-missing); " if f in missing else "")
            + README_SOURCES.get(f, "a table of the same columns (see its rows' `source` and `doc_ref`)")))
    lines += [
        "",
        "Every row keeps its origin: `source` and `release` as published, and `notes` starting with the input file "
        "and line (`mbps:135` = `megatron_bridge_perf_summary.csv` line 135; `mbps-sup`, `cards`, `nemo24`, "
        "`nemoug`, `automodel`, `bloom` likewise).  Each source row has its `doc_ref` (page, file and commit) in "
        "the source folder.",
        "",
        "## Licences",
        "",
        "Megatron-Bridge, NeMo, NeMo AutoModel (NVIDIA) and the BigScience repository are Apache-2.0; the "
        "documentation pages state no data licence, so the numbers are reproduced as facts with attribution to "
        "the page and commit each row cites (`doc_ref` in the source files).  The Hugging Face configurations "
        "reused from `scaledl-core/src/test/resources/transformers` carry the provenance given there "
        "(`README.md`, `PARAMS.md`).  `tools/llm-public/recipe_settings.csv` records settings read in the recipe "
        "code of NVIDIA-NeMo/Megatron-Bridge, NVIDIA/NeMo and NVIDIA/NeMo-Framework-Launcher (Apache-2.0) at the "
        "tags and paths each row names: facts of each job's configuration, no code copied.",
        "",
        "## Conversion rules",
        "",
        "(From the docstring of `tools/llm-public/convert.py`, which applies them.)",
        "",
        "```",
        rules,
        "```",
        "",
        "## Dropped rows by reason",
        "",
        "| reason | rows |",
        "|---|---:|",
    ]
    for reason in sorted(reasons, key=lambda r: (-reasons[r], r)):
        lines.append("| %s | %d |" % (reason.replace("|", "/"), reasons[reason]))
    lines += [
        "",
        "## Configurations",
        "",
        "One line per `configs/<key>/config.json`: where it comes from and what was assumed.",
        "",
    ] + config_lines + [
        "",
        "## Caveats",
        "",
        "- Recomputation is `none` for every NVIDIA row because no row or page states one; the NeMo 1.0 launcher's "
        "GPT-3 FP8 performance configs of that era used selective recomputation, which the 24.07 rows may have run.",
        "- MoE rows from Megatron-Bridge 25.11 on use force-balanced, token-dropless routing (notes); the 25.09 "
        "`tokendrop` DeepSeek-V3 rows used capacity-limited dropping, which the predictor cannot express.",
        "- BLOOM sweep step times are single-iteration snapshots (iteration 2); the sweep rows with hidden and "
        "layers but no NHEADS (the chronicle later says 'all NHEADS=64 (above too)') are dropped, not inferred.",
        "- Model TFLOP/s follow each source's FLOP convention; BLOOM's published TFLOPs are hardware TFLOPs and "
        "appear only in the notes.",
        "- Rows the predictor refuses (rule 13) are in dropped.csv with the check named (one DeepSeek-V3 layout "
        "whose expert group, EP 64, exceeds its 32 data x tensor-parallel ranks).",
        "- Layouts whose layers do not divide into the pipeline's chunks (BLOOM sweeps with 78 layers on 12 stages, "
        "Kimi K2's 61 layers on 8 x 4 chunks) are predicted with a balanced uneven split; the recipes' exact split "
        "is not published.",
        "- LoRA rows: the adapter rank is not published (32 assumed, AutoModel 16) and NeMo/Megatron-Bridge pack "
        "short SQuAD examples into each sequence, whose attention the predictor computes over the whole sequence.",
        "",
    ]
    (out / "PROVENANCE.md").write_text("\n".join(lines), encoding="utf-8")


if __name__ == "__main__":
    main()
