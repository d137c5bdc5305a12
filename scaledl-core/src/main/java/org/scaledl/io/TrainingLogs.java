package org.scaledl.io;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.Reader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.scaledl.InvalidInputException;
import org.scaledl.transformer.HuggingFaceConfig;
import org.scaledl.transformer.TransformerSpec;
import org.scaledl.workload.CudaGraphs;
import org.scaledl.workload.Device;
import org.scaledl.workload.Parallelism;
import org.scaledl.workload.Precision;
import org.scaledl.workload.Recompute;

/**
 * Reads Megatron-LM, Megatron-Bridge and NeMo training logs into the runs they measured: the job (sequence length,
 * micro-batch, data-parallel degree, tensor, pipeline, context, expert parallelism, precision, recomputation...),
 * the median steady-state iteration time, and the model (as a Hugging Face {@code config.json} built from the logged
 * arguments, or compared with one that is given). {@code scaledl runs --from-log} writes them as a job runs table
 * ({@link JobRuns}). Nothing is printed; every problem is an {@link InvalidInputException} naming the log.
 *
 * <pre>{@code
 * for (TrainingLogs.Run r : TrainingLogs.read(Path.of("train.log"), TrainingLogs.DEFAULT_WARMUP)) {
 *     System.out.println(r.id() + " " + r.job().dataParallel() + " " + r.measuredMs());
 * }
 * }</pre>
 *
 * <h2>What is read</h2>
 *
 * <p><b>Arguments.</b> Values are read in these forms, under the Megatron-LM argument names listed below (aliases in
 * brackets):
 * <ul>
 *   <li>Megatron-LM's argument block: the lines between one holding {@code arguments} between dashes
 *       ({@code ------ arguments ------}) and one holding {@code end of arguments}, each {@code name ..... value};
 *       any text before the name on a line (a rank prefix) is ignored;</li>
 *   <li>a YAML-like config dump (Megatron-Bridge's {@code ------- Task Configuration -------}, NeMo's Hydra config):
 *       whole lines {@code key: value}, at any indentation; a key with an empty value takes the {@code _target_} of
 *       the more indented lines below it ({@code activation_func:} / {@code _target_: torch.nn.functional.silu}) or
 *       their {@code - item} list;</li>
 *   <li>{@code key=value} pairs anywhere on a line: dataclass and namespace dumps ({@code TransformerConfig(...)},
 *       {@code OptimizerConfig(...)}, {@code GPTDatasetConfig(...)}, {@code Namespace(...)}); a value is a quoted
 *       string, a {@code <...>} or {@code [...]} group, or the text up to the next comma, parenthesis or space;</li>
 *   <li>these lines: Megatron's {@code using world size: N, data-parallel size: D, ...}, {@code > padded vocab (size:
 *       V) with P dummy tokens (new size: N)} (the padded vocabulary), {@code setting number of microbatches to
 *       constant M}, and Lightning's {@code Initializing distributed: GLOBAL_RANK: r, MEMBER: i/N} (world size N);
 *       a number there that is not a whole one ({@code 2.5}, {@code 1e308}) is refused at its line, not cut to its
 *       leading digits (text glued after the number is not part of it).</li>
 * </ul>
 * Only the names below are read; {@code None}, {@code null} and {@code ~} mean not set. Within a run the first value
 * of a name counts (a later one only replaces a value that was not set); a layout's degree ({@code world_size},
 * {@code data_parallel_size}, the parallel sizes, {@code devices}, {@code num_nodes}) or a model's size
 * ({@code hidden_size}, {@code num_layers}, {@code num_attention_heads}, {@code num_query_groups},
 * {@code ffn_hidden_size}, {@code kv_channels}, {@code padded_vocab_size}, {@code num_experts},
 * {@code moe_router_topk}, {@code moe_ffn_hidden_size}) stated again with another value is refused at its line.
 * <ul>
 *   <li>model: {@code hidden_size}, {@code num_layers}, {@code num_attention_heads}, {@code num_query_groups} (used
 *       when {@code group_query_attention} is True or not logged), {@code ffn_hidden_size}, {@code kv_channels},
 *       {@code padded_vocab_size} (else {@code vocab_size} as logged, said where Megatron-LM would pad it to a
 *       multiple of {@code make_vocab_size_divisible_by} times the tensor-parallel degree; compared with a given
 *       configuration's), {@code max_position_embeddings}, {@code swiglu},
 *       {@code squared_relu}, {@code gated_linear_unit} with {@code activation_func} ({@code activation}: NeMo's
 *       {@code swiglu}, {@code fast-swiglu}, {@code squared-relu}, {@code gelu}), {@code normalization}
 *       (LayerNorm or RMSNorm, NeMo 1's layernorm1p and low_precision_layernorm as LayerNorm; another value is
 *       refused), {@code position_embedding_type} (learned_absolute or rope),
 *       {@code untie_embeddings_and_output_weights} (or {@code share_embeddings_and_output_weights} False),
 *       {@code add_bias_linear}, {@code add_qkv_bias}, {@code qk_layernorm}, {@code attention_dropout},
 *       {@code hidden_dropout}, {@code num_experts} [{@code num_moe_experts}], {@code moe_router_topk},
 *       {@code moe_ffn_hidden_size}, {@code moe_shared_expert_intermediate_size}, {@code moe_layer_freq} (an integer
 *       N: layers 0, N, 2N... have experts; a list of 0/1 per layer; or {@code ([0]*3+[1]*58)});
 *       {@code transformer_impl}, {@code use_flash_attn} and {@code attention_backend} (the attention core fused or
 *       not: written as the configuration's {@code _attn_implementation}); {@code multi_latent_attention} and
 *       {@code is_hybrid_model} are read to refuse what cannot be written as a config; with a given configuration,
 *       the sizes, the feed-forward's gating, the output layer's tying and the attention core are compared with
 *       it;</li>
 *   <li>job: {@code seq_length} [{@code encoder_seq_length}; a dataset's {@code sequence_length} comes first, being
 *       what the data loader feeds], {@code micro_batch_size}, {@code global_batch_size},
 *       {@code tensor_model_parallel_size}, {@code pipeline_model_parallel_size}, {@code context_parallel_size},
 *       {@code expert_model_parallel_size}, {@code expert_tensor_parallel_size} (None: the tensor-parallel size),
 *       {@code virtual_pipeline_model_parallel_size} (None: 1) or {@code num_layers_per_virtual_pipeline_stage}
 *       (virtual stages = {@code num_layers / (pipeline x that)}), {@code world_size} (GPUs),
 *       {@code data_parallel_size}, NeMo's {@code devices} x {@code num_nodes} (both positive integers),
 *       {@code bf16}, {@code fp16}, {@code fp8} (None, False, 0 or no: off; hybrid, e4m3, True, 1 or yes: on;
 *       another value is refused) with {@code fp8_recipe} (delayed or tensorwise: fp8; blockwise: fp8-block; mxfp8),
 *       {@code fp4} (None, False, 0 or no: off; e2m1, nvfp4, True, 1 or yes: nvfp4; another value is refused) with
 *       {@code fp4_recipe} (nvfp4; another recipe is refused), NeMo's
 *       {@code precision} (bf16-mixed, 16-mixed, 32...), {@code sequence_parallel} (only with tensor parallelism),
 *       {@code recompute_granularity} [{@code activations_checkpoint_granularity}] (None, selective, full; None with
 *       {@code recompute_activations} True is selective; full with {@code recompute_method}
 *       [{@code activations_checkpoint_method}] block recomputes {@code recompute_num_layers}
 *       [{@code activations_checkpoint_num_layers}] layers of each model chunk, a table's {@code recompute_layers},
 *       uniform every layer) with {@code recompute_modules} (with selective, what it
 *       recomputes: a list of Megatron core's module names, {@link org.scaledl.workload.RecomputeModule}; None:
 *       core_attn; an empty list: nothing, as none), {@code use_distributed_optimizer} (True: ZeRO stage 1),
 *       Megatron-DeepSpeed's {@code zero_stage} (0–3, where {@code deepspeed} is True),
 *       {@code use_torch_fsdp2} (True: stage 3), {@code use_megatron_fsdp} or {@code use_custom_fsdp} with
 *       {@code data_parallel_sharding_strategy} (optim 1, optim_grads 2, optim_grads_params 3),
 *       {@code overlap_grad_reduce} [NeMo 1.x's {@code overlap_grad_sync}] (False: the gradients reduced after the
 *       backward pass), else older Megatron-LM's {@code DDP_impl} (local: after the backward pass; torch:
 *       overlapped); neither logged, or PyTorch FSDP2: overlapped; with the reduction overlapped and the
 *       distributed optimizer, {@code overlap_param_gather} (False: the updated weights gathered after the optimizer
 *       step, {@code gather-after-step}; not logged: overlapped); {@code grad_reduce_in_fp32}
 *       [{@code accumulate_allreduce_grads_in_fp32}] (False: 16-bit gradient buffers), else NeMo 1.x's
 *       {@code grad_sync_dtype} (bf16, fp16, fp32); neither logged: the precision's default;
 *       {@code overlap_moe_expert_parallel_comm} (True with expert parallelism: the experts' all-to-all behind
 *       another micro-batch's compute); {@code moe_token_dispatcher_type} (alltoall, allgather, or flex with
 *       {@code moe_flex_dispatcher_backend} deepep or hybridep; {@code moe_enable_deepep} True: deepep; none logged:
 *       alltoall); {@code cuda_graph_impl} with {@code cuda_graph_scope} [older
 *       {@code enable_cuda_graph}, {@code external_cuda_graph}] (CUDA graphs of the whole iteration where local graphs
 *       have the scope full_iteration, else of layers; {@link org.scaledl.workload.CudaGraphs}).</li>
 * </ul>
 * The data-parallel degree is {@code data_parallel_size}, else {@code world_size / (tensor x pipeline x context)},
 * else {@code global_batch_size / (micro_batch_size x micro-batches)} when the micro-batches are logged; each replica
 * runs {@code global_batch_size / (micro_batch_size x data-parallel)} micro-batches. Degrees that do not divide, a
 * layout Megatron would not run ({@link Parallelism}'s checks) and logged values that disagree (world size and
 * data-parallel size, micro-batches) are refused. Every integer is range-checked before use (a positive
 * {@code int}: a layer count of 2<sup>32</sup> + 32 is refused, not read as 32), and values appear in messages only
 * through {@link InvalidInputException#printable}.
 *
 * <p><b>Iterations.</b> Megatron-LM's and Megatron-Bridge's {@code iteration 10/ 1000 | ... | elapsed time per
 * iteration (ms): 1234.5 | ...} and NeMo/Lightning's {@code train_step_timing in s: 1.234} (also
 * {@code train_step_timing: 1.234} and {@code train_step_timing in s=1.234}); a time is a plain decimal number
 * (digits with a sign, a fraction and an exponent: Java's {@code 0x1p1}, {@code 2.41d}, {@code 2.41f} are refused).
 * One run's lines are of one of the two formats (both, which time the same steps, are refused naming a line of
 * each). Each such line is one logged iteration
 * (with Megatron's {@code log_interval} above 1, the mean of that many), numbered by its {@code iteration N/M}, else,
 * for a drawing of Lightning's progress bar (the training bar's own: the last {@code Epoch} label before the time, a
 * validation bar drawn on the same line aside), by its metrics' {@code global_step}, else by the bar's count
 * ({@code | N/M [}, {@code Nit [} or NeMo's {@code Epoch E N/M,}, which starts again each epoch; its drawing at 0,
 * when it resets for a new epoch, is no step); a drawing repeating the previous drawing's number (a bar redrawn, its
 * count first and then the step's time, or counting validation batches on) replaces it: a step's last drawing is its
 * iteration. A step line (Megatron's, NeMo's) repeating the previous one's number is dropped where it is the same
 * line again (time and batch), and refused naming both lines where its time differs (two jobs' lines interleaved).
 * A bar's last drawing, which tqdm ends only with the next one's carriage return, is whole where it closes
 * its metrics ({@code ]}); a line the log ends inside is left out, with a warning, and so is a line cut short
 * inside the log (nothing after its time where the iteration lines beside it in its run go on after theirs: a job
 * killed while writing it, then restarted). Lines are counted as editors count them (ending in LF or CR LF; a bar's
 * drawings, which a lone CR separates, share one). A gzip'd log is read through (cut short, up to the cut, with a
 * warning); UTF-16 with its byte-order mark is read as such (a log whose bytes look like UTF-16 without it, or
 * UTF-32, is refused, if no iteration line is read, saying to convert it to UTF-8). The run's time is the
 * <b>median</b> of the steady state: the first {@code warmup} logged iterations are dropped
 * ({@link #DEFAULT_WARMUP}: 10, or a third, rounded up, when a run logs fewer than 30: a first iteration holds the
 * start-up, which may take two), and of the rest those whose line (Megatron's {@code global batch size: N}, NeMo's
 * {@code global_batch_size: N}) says another global batch than the job's (a batch-size ramp-up) are left out with
 * a warning (with a Megatron line after them, which may average the ramp's steps); a run none of whose steady
 * iterations ran the job's batch is refused. A run with no iteration lines, or none after warm-up, is refused. Times
 * after warm-up whose quartiles lie more than 20 % of the median apart are warned of, at the first iteration line
 * more than 10 % from the median, naming the first three.
 *
 * <p><b>Runs.</b> A log holds one run, or several when configuration (an argument block, a dump, any value above)
 * appears again after iteration lines: each such appearance starts the next run, which must log its own arguments
 * (nothing carries over). Runs keep the log's order. A log is read as UTF-8 text (bytes that are not replaced), line
 * by line; a line of more than 2<sup>20</sup> characters is refused (a text log has none; {@code /dev/zero} would).
 *
 * <p><b>Device.</b> The GPU name where the log prints one (the first found applies to every run): a line with
 * {@code torch.cuda.get_device_name(...)} followed by the name, {@code device name: NAME} or {@code gpu_name=NAME},
 * {@code nvidia-smi -L}'s {@code GPU 0: NAME (UUID: ...)}, or the first GPU row of an {@code nvidia-smi} table.
 *
 * <p><b>Model.</b> Given a Hugging Face {@code config.json} ({@link #read(Path, int, Path)}), the logged
 * {@code hidden_size}, {@code num_layers}, {@code num_attention_heads} and, when logged, the query groups and
 * {@code num_experts} and {@code moe_router_topk} must be the configuration's (a log whose {@code num_experts} is None
 * is of a dense model), and
 * the configuration's {@code vocab_size} must lie within a tenth of a logged {@code padded_vocab_size} (both are the
 * tokenizer's vocabulary, each padded its own way: Qwen's configuration says 151,936 where Megatron pads to 151,680;
 * another model's differ by more). A log with a different model than the one given is refused,
 * naming the key, the logged value and the configuration's. Without one, {@link Run#config()} is a configuration
 * built from the arguments (read back with {@link HuggingFaceConfig} before it is returned): {@code llama} for
 * SwiGLU with RMSNorm ({@code qwen2} when only the query, key and value projections have biases, {@code qwen3} with
 * {@code qk_layernorm}); {@code gpt2} keys for GELU with learned absolute positions, tied embeddings, biases and no
 * grouped queries; {@code nemotron} (LayerNorm with rotary positions and the logged activation) otherwise; for
 * mixtures of experts (SwiGLU experts only) {@code mixtral} when every layer has experts and no shared expert or QK
 * norm, {@code llama4_text} with a shared expert the experts' size, and {@code qwen3_moe} otherwise (its per-layer
 * {@code mlp_only_layers} follow {@code moe_layer_freq}). Multi-latent attention and hybrid (Mamba) models need a
 * given configuration. When the log lacks what the model or a column needs, the error lists every missing argument.
 */
public final class TrainingLogs {
    private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(TrainingLogs.class);

    /**
     * Warm-up by default: the first 10 logged iterations, or a third of them, rounded up, when fewer than 30 are
     * logged.
     */
    public static final int DEFAULT_WARMUP = -1;
    /** The longest line read, in characters (a log is text: a line of megabytes, or /dev/zero, is not one). */
    private static final int MAX_LINE = 1 << 20;
    /** The most items of a YAML list kept (a layer pattern has one per layer). */
    private static final int MAX_ITEMS = 100_000;
    /** Runs with fewer logged iterations than this drop a third of them by default. */
    private static final int FEW = 30;

    private static final Pattern ARG_HEADER = Pattern.compile("-{3,}\\s*arguments\\s*-{3,}");
    /** An argument block's {@code name ..... value} (a message ending in {@code ...}, "training ...", is none). */
    private static final Pattern ARG_ENTRY = Pattern.compile("(?:^|\\s)([A-Za-z_]\\w*)\\s+\\.{2,}\\s+(\\S.*?)\\s*$");
    private static final Pattern ELAPSED = Pattern.compile(
            "elapsed time per iteration \\(ms\\):\\s*([^\\s|]+)", Pattern.CASE_INSENSITIVE);
    /** An iteration line timed in another unit than Megatron's milliseconds (a fork's, or an edited log's). */
    private static final Pattern ELAPSED_OTHER_UNIT = Pattern.compile(
            "elapsed time per iteration \\((?!ms\\))([^)]{1,12})\\)", Pattern.CASE_INSENSITIVE);
    private static final Pattern STEP_TIMING = Pattern.compile("train_step_timing(?: in s)?\\s*[:=]\\s*([^\\s|,\\]]+)");
    /** A LoRA adapter's rank in a logged {@code LoRA(...)} ({@code dim=32}). */
    private static final Pattern LORA_DIM = Pattern.compile("\\bdim\\s*=\\s*(\\d{1,9})\\b");
    /** A configuration's LoRA scheme: NeMo 1's {@code peft_scheme: lora}, a {@code _target_} of a LoRA class. */
    private static final Pattern LORA_SCHEME = Pattern.compile(
            "peft_scheme\\s*[:=]\\s*['\"]?lora|_target_\\s*[:=]\\s*\\S*lora\\w*\\s*$", Pattern.CASE_INSENSITIVE);
    /** An iteration line (Megatron's, NeMo's) that ends before its time. */
    private static final Pattern TIME_CUT = Pattern.compile(
            "elapsed time per iteration(?: \\(ms\\)?)?:?\\s*$", Pattern.CASE_INSENSITIVE);
    private static final Pattern STEP_TIME_CUT = Pattern.compile("train_step_timing(?: in s)?\\s*[:=]?\\s*$");
    /** A NeMo step line timed in another unit than seconds ({@code train_step_timing in ms: 3630}). */
    private static final Pattern STEP_TIMING_OTHER_UNIT = Pattern.compile(
            "train_step_timing in (?!s\\s*[:=])([A-Za-z]{1,12})\\s*[:=]\\s*[-+.\\d]");
    private static final Pattern ITERATION = Pattern.compile("\\biteration\\s+(\\d{1,18})\\s*/");
    /** The iterations a Megatron line says its run has in all ({@code iteration 21/ 100}). */
    private static final Pattern ITERATION_TOTAL = Pattern.compile(
            "\\biteration\\s+\\d{1,18}\\s*/\\s*(\\d{1,18})\\b");
    /** The samples a Megatron line says its run has consumed ({@code consumed samples: 2688}). */
    private static final Pattern CONSUMED = Pattern.compile("\\bconsumed samples:\\s*(\\d{1,18})\\b");
    /**
     * A tqdm progress bar's count: {@code | 10/100 [} with a total, {@code 10it [} without (Lightning's bar),
     * {@code Epoch 0 10/100,} (a NeMo bar format without the bar).
     */
    private static final Pattern PROGRESS = Pattern.compile(
            "\\|\\s*(\\d{1,18})/\\d{1,18}\\s*\\[|(?<![\\w.])(\\d{1,18})it\\s*\\["
            + "|\\bEpoch\\s+\\d{1,18}\\s+(\\d{1,18})/\\d{1,18},");
    /** The step a Lightning bar's metrics name ({@code global_step=9.000}): it does not move while a bar redraws. */
    private static final Pattern GLOBAL_STEP = Pattern.compile("\\bglobal_step=(\\d{1,18})(?:\\.0*)?(?![\\d.])");
    /** A GPU's line of a listing ({@code GPU 1: NVIDIA A100-SXM4-80GB}, nvidia-smi -L's). */
    private static final Pattern GPU_INDEX = Pattern.compile("\\bGPU \\d{1,4}:");
    /** The epoch a step line numbers its steps in (NeMo 2 / Lightning: "Training epoch 0, iteration 5/39"). */
    private static final Pattern EPOCH = Pattern.compile("\\b[Ee]poch[\\s=:]*(\\d{1,18})\\b");
    /**
     * Lightning's step count and NeMo's consumed samples on a step line ({@code global_step: 11}, {@code
     * consumed_samples: 768}): they never go back within a run, not even at a new epoch.
     */
    private static final Pattern STEP_COUNT = Pattern.compile(
            "\\b(global_step|consumed_samples)[=:]\\s*(\\d{1,18})(?:\\.0*)?(?![\\d.])");
    /** An iteration that skipped its update: Megatron's skipped iterations counted on its line (a loss scaler's). */
    private static final Pattern SKIPPED = Pattern.compile("number of skipped iterations:\\s*[1-9]");
    /**
     * An iteration that diverged: Megatron's NaN iterations counted on its line, or a loss logged as NaN (Megatron's
     * {@code lm loss}, NeMo's {@code reduced_train_loss}).
     */
    private static final Pattern DIVERGED = Pattern.compile(
            "number of nan iterations:\\s*[1-9]|loss[\\w ]*[=:]\\s*[-+]?nan\\b", Pattern.CASE_INSENSITIVE);
    /** The share of timed iterations that skipped their update beyond which they are said (an fp16 run skips a few). */
    private static final double SKIPPED_SHARE = 0.05;
    /** The global batch a Megatron iteration line says it ran (it grows under {@code rampup_batch_size}). */
    private static final Pattern ITERATION_BATCH = Pattern.compile("global batch size:\\s*(-?\\d{1,18}(?:\\.\\d+)?)");
    /** The global batch a NeMo step line (or a bar's metrics) says it ran ({@code global_batch_size: 64}). */
    private static final Pattern STEP_BATCH = Pattern.compile(
            "\\bglobal_batch_size\\s*[:=]\\s*(\\d{1,18})(?:\\.0*)?(?![\\w.])");
    /**
     * A step line of a training loop this reader does not read: TorchTitan's ({@code step: N  loss: ...  tps: T}, its
     * fields coloured by terminal escapes unless it logs without colour), Hugging Face Trainer's, DeepSpeed's engine's
     * ({@code step=N, skipped=K, lr=...}), throughput timer's ({@code RunningAvgSamplesPerSec=...}) and pipeline
     * engine's ({@code steps: N loss: ... iter time (s): ...}) without Megatron's iteration lines.
     */
    private static final Pattern FOREIGN_STEP = Pattern.compile("\\bstep:\\s*\\d+\\s+loss:[^\\n]*?\\btps:\\s*[\\d,]+"
            + "|'train_steps_per_second':\\s*[\\d.]+|\\{'loss':\\s*[\\d.]+|\\bstep=\\d+,\\s*skipped=\\d+"
            + "|RunningAvgSamplesPerSec=[\\d.]+|\\bsteps:\\s*\\d+\\s+loss:[^\\n]*?\\biter time \\(s\\):");
    private static final Pattern COLOUR = Pattern.compile("\\u001B\\[[0-9;]*m");

    /** Whether a line is a step line of another training loop ({@link #FOREIGN_STEP}), its colours taken out. */
    private static boolean foreignStep(String line) {
        if (!line.contains("tps:") && !line.contains("'train_steps_per_second'") && !line.contains("{'loss'")
                && !line.contains("skipped=") && !line.contains("SamplesPerSec=") && !line.contains("iter time")) {
            return false;
        }
        return FOREIGN_STEP.matcher(line).find();
    }
    private static final Pattern YAML = Pattern.compile("^(\\s*)([A-Za-z_]\\w*)\\s*:(?:\\s+(.*?))?\\s*$");
    private static final Pattern YAML_ITEM = Pattern.compile("^(\\s*)-\\s+(.*?)\\s*$");
    private static final Pattern PAIR = Pattern.compile(
            "(?<![\\w.])([A-Za-z_]\\w*)=('[^']*'|\"[^\"]*\"|<[^>]*>|\\[[^\\]]*\\]|\\([^()]*\\)|[^,()\\s]+)");
    private static final Pattern WORLD = Pattern.compile("using world size:\\s*(\\d[\\d.eE+-]*)");
    private static final Pattern WORLD_DP = Pattern.compile("data-parallel[- ]size:\\s*(\\d[\\d.eE+-]*)");
    /** The degrees Megatron's {@code using world size:} summary states, each with its argument's name. */
    private static final Map<Pattern, String> WORLD_DEGREES = new LinkedHashMap<>();

    static {
        WORLD_DEGREES.put(Pattern.compile("(?<!hierarchical )context-parallel size:\\s*(\\d[\\d.eE+-]*)"),
                "context_parallel_size");
        WORLD_DEGREES.put(Pattern.compile("tensor-model-parallel size:\\s*(\\d[\\d.eE+-]*)"),
                "tensor_model_parallel_size");
        WORLD_DEGREES.put(Pattern.compile("pipeline-model-parallel size:\\s*(\\d[\\d.eE+-]*)"),
                "pipeline_model_parallel_size");
    }
    private static final Pattern PADDED = Pattern.compile("padded vocab.*new size:\\s*(\\d[\\d.eE+-]*)");
    private static final Pattern MICRO = Pattern.compile("number of microbatches to constant\\s+(\\d[\\d.eE+-]*)");
    private static final Pattern MEMBER = Pattern.compile(
            "Initializing distributed: GLOBAL_RANK: \\d+, MEMBER: \\d+/(\\d[\\d.eE+-]*)");
    private static final Pattern DEVICE_NAMED = Pattern.compile(
            "(?i)\\b(?:gpu|device)[ _]name\\s*[:=]\\s*['\"]?([^'\"|]+?)['\"]?\\s*$");
    private static final Pattern SMI_L = Pattern.compile("^\\s*GPU \\d+: (.+?) \\(UUID:");
    private static final Pattern SMI_TABLE = Pattern.compile("^\\|\\s+\\d+\\s+(\\S.*?\\S)\\s{2,}(?:On|Off)\\s+\\|");
    private static final Pattern FREQ_EXPR = Pattern.compile("\\[([01])\\]\\s*\\*\\s*(\\d{1,9})");

    /**
     * The widest spread of a run's iteration times after warm-up, between its quartiles, as a share of their median,
     * before it is warned of: a steady run's iterations vary by a few percent.
     */
    static final double MAX_SPREAD = 0.2;

    /** Canonical argument names and their aliases. */
    private static final Map<String, String> KEYS = new LinkedHashMap<>();

    static {
        for (String k : List.of("hidden_size", "num_layers", "num_attention_heads", "num_query_groups",
                "group_query_attention", "ffn_hidden_size", "kv_channels", "padded_vocab_size", "vocab_size",
                "max_position_embeddings", "swiglu", "squared_relu", "gated_linear_unit", "activation_func",
                "activation", "normalization", "position_embedding_type", "untie_embeddings_and_output_weights",
                "share_embeddings_and_output_weights", "add_bias_linear", "add_qkv_bias", "qk_layernorm",
                "attention_dropout", "hidden_dropout", "num_experts", "moe_router_topk", "moe_ffn_hidden_size",
                "moe_shared_expert_intermediate_size", "moe_layer_freq", "multi_latent_attention", "is_hybrid_model",
                "seq_length", "sequence_length", "micro_batch_size", "global_batch_size",
                "tensor_model_parallel_size", "pipeline_model_parallel_size", "context_parallel_size",
                "expert_model_parallel_size", "expert_tensor_parallel_size", "virtual_pipeline_model_parallel_size",
                "num_layers_per_virtual_pipeline_stage", "world_size", "data_parallel_size", "devices", "num_nodes",
                "num_micro_batches", "bf16", "fp16", "fp8", "fp8_recipe", "fp4", "fp4_recipe", "precision",
                "sequence_parallel",
                "recompute_granularity", "recompute_activations", "recompute_modules", "use_distributed_optimizer",
                "use_torch_fsdp2", "use_megatron_fsdp", "use_custom_fsdp", "data_parallel_sharding_strategy",
                "overlap_grad_reduce",
                "DDP_impl", "grad_reduce_in_fp32", "grad_sync_dtype", "overlap_moe_expert_parallel_comm",
                "moe_token_dispatcher_type", "moe_flex_dispatcher_backend", "moe_enable_deepep",
                "cuda_graph_impl", "cuda_graph_scope", "enable_cuda_graph", "external_cuda_graph", "deepspeed",
                "zero_stage", "window_size", "softmax_type", "cpu_offloading", "cpu_offloading_activations",
                "cpu_offloading_num_layers", "packed_sequence_size", "overlap_p2p_comm", "recompute_method",
                "recompute_num_layers", "decoder_first_pipeline_num_layers", "decoder_last_pipeline_num_layers",
                "account_for_embedding_in_pipeline_split", "account_for_loss_in_pipeline_split",
                "transformer_impl", "use_flash_attn", "attention_backend", "make_vocab_size_divisible_by",
                "log_interval", "quick_geglu", "lora_adapters", "lora_dim", "fp8_param_gather", "fp8_params",
                "overlap_param_gather", "rampup_batch_size")) {
            KEYS.put(k, k);
        }
        KEYS.put("num_moe_experts", "num_experts");
        KEYS.put("encoder_seq_length", "seq_length");
        KEYS.put("activations_checkpoint_granularity", "recompute_granularity");
        KEYS.put("activations_checkpoint_method", "recompute_method");
        KEYS.put("activations_checkpoint_num_layers", "recompute_num_layers");
        KEYS.put("overlap_grad_sync", "overlap_grad_reduce");
        KEYS.put("accumulate_allreduce_grads_in_fp32", "grad_reduce_in_fp32");
    }

    private TrainingLogs() {
    }

    /**
     * The job of a run, in the columns of a candidate table ({@link Candidates}).
     *
     * @param seq              tokens per sequence
     * @param microBatch       sequences per micro-batch ({@code batch})
     * @param microBatches     micro-batches per data-parallel replica per iteration
     * @param dataParallel     data-parallel replicas ({@code world_size} of the table; not GPUs)
     * @param tensor           tensor-parallel degree
     * @param pipeline         pipeline stages
     * @param context          context-parallel degree
     * @param virtualStages    model chunks per pipeline stage
     * @param unevenPipeline   the layers split unevenly over the stages (a log stating the first or last stage's
     *                         layers, or counting the embedding or loss as one): a table's {@code uneven_pipeline}
     * @param expert           expert-parallel degree (1 without experts)
     * @param expertTensor     expert tensor-parallel degree (1 without experts)
     * @param zeroStage        ZeRO stage (1: Megatron's distributed optimizer; 3: FSDP)
     * @param precision        the training precision
     * @param recompute        activation recomputation
     * @param recomputeLayers  with full recomputation, the layers of each model chunk recomputed (Megatron's block
     *                         method); 0: every layer
     * @param recomputeModules what selective recomputation recomputes
     *                         ({@link org.scaledl.workload.Workload#recomputeModules()}; the default with any other)
     * @param sequenceParallel Megatron's sequence parallelism
     * @param gradReduce       when the data-parallel collectives run ({@link org.scaledl.workload.Workload#gradReduce()}:
     *                         the gradients' reduction after the backward pass, the weights' gather after the
     *                         optimizer step, or both overlapped)
     * @param sixteenBitGradients 16-bit gradient buffers (true) or FP32 ones (false) as logged
     *                         ({@link org.scaledl.workload.Workload#sixteenBitGradients()}); empty when the log does
     *                         not say (the precision's default) or in FP32 training
     * @param moeDispatcher    how expert parallelism moves the tokens
     *                         ({@link org.scaledl.workload.Workload#moeDispatcher()}; all-to-all without experts)
     * @param expertCommOverlap expert parallelism's all-to-all behind another micro-batch's compute
     *                         ({@link org.scaledl.workload.Workload#expertCommOverlap()}; false without experts)
     * @param cudaGraphs       what of the iteration runs as CUDA graphs
     *                         ({@link org.scaledl.workload.Workload#cudaGraphs()})
     * @param fp8ParamGather   FP8 weights as the parameters ({@code fp8_param_gather}, NeMo's {@code fp8_params};
     *                         {@link org.scaledl.workload.Workload#fp8ParamGather()}), where the job can run them
     * @param gpusPerNode      the GPUs per node the log states: NeMo's trainer {@code devices} where it logs
     *                         {@code num_nodes} beside it, a count within a node's range; empty otherwise
     *                         ({@code auto}, {@code -1}, a log without them: the device's standard server)
     */
    public record Job(int seq, int microBatch, int microBatches, int dataParallel, int tensor, int pipeline,
            int context, int virtualStages, boolean unevenPipeline, int expert, int expertTensor, int zeroStage,
            Precision precision,
            Recompute recompute, int recomputeLayers,
            java.util.Set<org.scaledl.workload.RecomputeModule> recomputeModules,
            boolean sequenceParallel, org.scaledl.workload.GradReduce gradReduce,
            Optional<Boolean> sixteenBitGradients, org.scaledl.workload.MoeDispatcher moeDispatcher,
            boolean expertCommOverlap, CudaGraphs cudaGraphs, boolean fp8ParamGather, Optional<Integer> gpusPerNode) {
        /** Copies the modules; refuses null components and sizes below one. */
        public Job {
            java.util.Objects.requireNonNull(precision, "precision");
            java.util.Objects.requireNonNull(recompute, "recompute");
            recomputeModules = java.util.Set.copyOf(java.util.Objects.requireNonNull(recomputeModules,
                    "recomputeModules"));
            java.util.Objects.requireNonNull(gradReduce, "gradReduce");
            java.util.Objects.requireNonNull(sixteenBitGradients, "sixteenBitGradients");
            java.util.Objects.requireNonNull(moeDispatcher, "moeDispatcher");
            java.util.Objects.requireNonNull(cudaGraphs, "cudaGraphs");
            java.util.Objects.requireNonNull(gpusPerNode, "gpusPerNode");
            org.scaledl.Checks.argument(seq > 0 && microBatch > 0 && microBatches > 0 && dataParallel > 0 && tensor > 0
                    && pipeline > 0 && context > 0 && virtualStages > 0 && expert > 0 && expertTensor > 0
                    && zeroStage >= 0 && recomputeLayers >= 0, "a job's sizes are at least 1 (ZeRO stage and "
                    + "recomputed layers at least 0)");
        }

        /** GPUs the job uses: {@code dataParallel x tensor x pipeline x context}. */
        public long gpus() {
            return (long) dataParallel * tensor * pipeline * context;
        }

        /**
         * The job's settings as a runs table's cells ({@code seq}, {@code batch}, {@code micro_batches},
         * {@code world_size}, the degrees and {@code uneven_pipeline}, {@code zero_stage}, {@code gpus_per_node}
         * where the log states it,
         * {@code precision}, {@code recompute}, {@code recompute_layers}, {@code recompute_modules},
         * {@code sequence_parallel},
         * {@code grad_reduce}, {@code grad_dtype}, {@code fp8_param_gather}, {@code moe_a2a_overlap},
         * {@code moe_dispatcher},
         * {@code cuda_graphs}; an empty cell where the job leaves a setting to its default), in that order: what the
         * command line's {@code runs --from-log} writes and {@link Run#sample} reads back, one mapping of a log's job.
         */
        public Map<String, String> cells() {
            Map<String, String> m = new LinkedHashMap<>();
            m.put("seq", Integer.toString(seq));
            m.put("batch", Integer.toString(microBatch));
            m.put("micro_batches", Integer.toString(microBatches));
            m.put("world_size", Integer.toString(dataParallel));
            m.put("tensor", Integer.toString(tensor));
            m.put("pipeline", Integer.toString(pipeline));
            m.put("context", Integer.toString(context));
            m.put("virtual_stages", Integer.toString(virtualStages));
            m.put("uneven_pipeline", Boolean.toString(unevenPipeline));
            m.put("expert", Integer.toString(expert));
            m.put("expert_tensor", Integer.toString(expertTensor));
            m.put("zero_stage", Integer.toString(zeroStage));
            m.put("gpus_per_node", gpusPerNode.map(String::valueOf).orElse(""));
            m.put("precision", precision.label());
            org.scaledl.workload.Workload.recomputeCells(recompute, recomputeLayers, recomputeModules, 0)
                    .forEach((k, v) -> {
                        if (!k.equals("offload_layers")) {
                            m.put(k, v);
                        }
                    });
            m.put("sequence_parallel", Boolean.toString(sequenceParallel));
            m.put("grad_reduce", gradReduce.label());
            m.put("grad_dtype", sixteenBitGradients.map(b -> org.scaledl.workload.Workload.gradDtypeLabel(b,
                    precision)).orElse(""));
            m.put("fp8_param_gather", Boolean.toString(fp8ParamGather));
            m.put("moe_a2a_overlap", Boolean.toString(expertCommOverlap));
            m.put("moe_dispatcher", expert > 1 ? moeDispatcher.label() : "");
            m.put("cuda_graphs", cudaGraphs.label());
            return Collections.unmodifiableMap(m);
        }
    }

    /**
     * One run a log measured.
     *
     * @param log        the log
     * @param index      1-based position of the run in the log
     * @param count      runs in the log
     * @param line       the line where the run's configuration starts
     * @param arguments  the argument values read (canonical names, as logged), in the order first seen
     * @param job        the job
     * @param measuredMs the median steady-state iteration, ms
     * @param iterations logged iterations the median took
     * @param warmup     logged iterations dropped before them as warm-up
     * @param device     the GPU name the log prints, if it prints one
     * @param config     a Hugging Face {@code config.json} (JSON text) built from the arguments; empty when the model
     *                   was given
     * @param loggedEvery the iterations between two numbered Megatron iteration lines, as most of them are numbered
     *                   (a line times their mean: its {@code log_interval}); 0 where the lines do not tell, and for
     *                   other formats' lines (each times its own step)
     */
    public record Run(Path log, int index, int count, int line, Map<String, String> arguments, Job job,
            double measuredMs, int iterations, int warmup, Optional<String> device, Optional<String> config,
            int loggedEvery) {
        /** A run whose lines' numbering is not told ({@code loggedEvery} 0). */
        public Run(Path log, int index, int count, int line, Map<String, String> arguments, Job job,
                double measuredMs, int iterations, int warmup, Optional<String> device, Optional<String> config) {
            this(log, index, count, line, arguments, job, measuredMs, iterations, warmup, device, config, 0);
        }

        /** Copies. */
        public Run {
            org.scaledl.Checks.argument(loggedEvery >= 0, "loggedEvery must be >= 0: %s", loggedEvery);
            java.util.Objects.requireNonNull(log, "log");
            java.util.Objects.requireNonNull(job, "job");
            java.util.Objects.requireNonNull(device, "device");
            java.util.Objects.requireNonNull(config, "config");
            arguments = Collections.unmodifiableMap(new LinkedHashMap<>(java.util.Objects.requireNonNull(arguments,
                    "arguments")));
        }

        /** The log's file name, with {@code #index} when the log holds several runs. */
        public String id() {
            String name = log.getFileName() == null ? log.toString() : log.getFileName().toString();
            return count > 1 ? name + "#" + index : name;
        }

        /**
         * This run as a sample to calibrate on ({@code RuntimePredictor.calibrate}), its model built from the log's
         * arguments ({@link #config()}): the job the command line's {@code runs --from-log} writes as a runs table's
         * row and {@code fit --calibrate --runs} reads, measured at {@link #measuredMs()}, tagged with its
         * {@link #id()} and its source (the log and the line its configuration starts at).
         *
         * <p>The topology is the device's standard system, or its nodes of the GPUs a NeMo log states; the command
         * line's {@code runs --gpus-per-node}, {@code --nvlink-domain} and {@code --inter-node-gbps} replace that in
         * the table: give such a
         * machine in Java as {@code Sample.of(s.workload().toBuilder().topology(t).build(), s.millis())}.
         *
         * @param device the GPU it ran on (the log's {@link #device()} names it, as the catalog finds it)
         * @throws IllegalArgumentException for a run read with a given model (no {@link #config()}: use
         *         {@link #sample(Device, TransformerSpec)}), or a device that is not a GPU
         * @throws InvalidInputException where the configuration the log's arguments built cannot be read (it was
         *         read once when the log was)
         */
        public org.scaledl.workload.Sample sample(Device device) {
            String json = config.orElseThrow(() -> new IllegalArgumentException("run " + id() + " was read with a "
                    + "given model, so its log's arguments built none: give the model (sample(device, model))"));
            return sample(device, HuggingFaceConfig.parse(json.getBytes(StandardCharsets.UTF_8), log + " run " + index,
                    id()));
        }

        /**
         * This run as a sample to calibrate on, of the given model (the configuration its log was read with); see
         * {@link #sample(Device)}.
         *
         * @throws IllegalArgumentException for a device that is not a GPU
         * @throws InvalidInputException naming the log, for a model whose sizes or structure the log's arguments
         *         contradict (as {@link TrainingLogs#read(Path, int, Path)} refuses a configuration); naming the log
         *         and the run's line, for settings that do not go together (a
         *         layout the model cannot split, a tensor degree that does not divide its heads, is refused where the
         *         sample is predicted or calibrated on, as a table's row is)
         */
        public org.scaledl.workload.Sample sample(Device device, TransformerSpec model) {
            java.util.Objects.requireNonNull(device, "device");
            java.util.Objects.requireNonNull(model, "model");
            if (!device.isGpu()) {
                throw new IllegalArgumentException("a training log's run is a GPU job: " + device.name()
                        + " is no GPU");
            }
            refuseOtherModel(model);
            // the log's GPU as the catalog names it (a name it does not hold, as logged: a user's own GPU)
            this.device.map(named -> DeviceCatalog.bundled().find(named).map(Device::name).orElse(named))
                    .filter(named -> !named.equals(device.name())).ifPresent(named -> LOG.warn("{}:{}: {}the log "
                    + "ran on {}; its sample is taken as {}'s, as asked (its time was measured on the log's GPU: "
                    + "give that one to keep it)", log, line, count > 1 ? "run " + index + ": " : "",
                    clip(named), device.name()));
            // the row runs --from-log writes, read as a runs table's row is (Candidates): one mapping of the job
            Map<String, String> cells = new LinkedHashMap<>(job.cells());
            cells.put("device", device.name());
            org.scaledl.workload.Workload w = Candidates.row(cells, model, device, log.toString(), line).toBuilder()
                    .tag("id", id()).tag(DatasetReader.SOURCE_TAG, log + ":" + line).build();
            return org.scaledl.workload.Sample.of(w, measuredMs);
        }

        /**
         * Refuses a model whose sizes or structure the log's arguments contradict, as {@link TrainingLogs#read(Path,
         * int, Path)} refuses a configuration (one comparison): a sample of another model at this run's time would
         * calibrate on no measurement of it.
         */
        private void refuseOtherModel(TransformerSpec model) {
            Segment logged = new Segment(log.toString(), line);
            arguments.forEach((key, value) -> logged.args.put(key, new Value(value, line, false)));
            logged.compare(count > 1 ? "run " + index + ": " : "", model, null);
        }
    }

    /**
     * Reads a log's runs, building each run's model from its arguments ({@link Run#config()}).
     *
     * @param warmup logged iterations to drop before the median, or {@link #DEFAULT_WARMUP}
     * @throws InvalidInputException naming the log: unreadable, no iteration lines (or none after warm-up), missing
     *         arguments (all listed), a value out of range, a layout that does not divide, a model that cannot be
     *         written as a configuration
     */
    public static List<Run> read(Path log, int warmup) {
        return read(log, warmup, null);
    }

    /**
     * Reads a log's runs of a given model: every run's logged model sizes must be the configuration's.
     *
     * @param transformer a Hugging Face {@code config.json}; {@code null}: the model from the arguments, as
     *                    {@link #read(Path, int)}
     * @throws InvalidInputException as {@link #read(Path, int)}, and naming the key, the logged and the
     *         configuration's value when the log's model differs from the configuration's
     */
    public static List<Run> read(Path log, int warmup, Path transformer) {
        java.util.Objects.requireNonNull(log, "log");
        if (warmup < DEFAULT_WARMUP) {
            throw new IllegalArgumentException("warm-up must be 0 or more iterations (or DEFAULT_WARMUP): " + warmup);
        }
        TransformerSpec model = transformer == null ? null : HuggingFaceConfig.read(transformer);
        List<Segment> segments = scan(log);
        List<Run> runs = new ArrayList<>();
        for (int i = 0; i < segments.size(); i++) {
            runs.add(segments.get(i).run(i + 1, segments.size(), warmup, model, transformer));
        }
        return runs;
    }

    // ---------------------------------------------------------------------------------------------------------------
    // Scanning

    private static List<Segment> scan(Path log) {
        String source = log.toString();
        List<Segment> segments = new ArrayList<>();
        Segment cur = new Segment(source, 1);
        segments.add(cur);
        String device = null;
        // every line that names a GPU, in order: each run takes its own (runs of two machines in one log)
        List<GpuLine> gpuLines = new ArrayList<>();
        boolean inArgs = false;
        // the line the open argument block's header is on, its last argument's, and the lines after that one (read
        // again where the block turns out to have no end line)
        int argsFrom = 0;
        int lastArgument = 0;
        ArrayDeque<LogLine> afterArguments = new ArrayDeque<>();
        long afterBytes = 0;
        String pendingKey = null;
        int pendingIndent = -1;
        int pendingLine = 0;
        List<String> pendingItems = new ArrayList<>();
        Cut[] cut = new Cut[1];
        String[] wide = new String[1];
        try (Lines in = new Lines(open(log, cut, wide), source)) {
            int lineNo = 0;
            // lines by width, and the first iteration line of each width with nothing after its time: a log cut or
            // wrapped at a fixed width (cut -c, fold, a terminal's copy) has many lines of its widest, its
            // iteration lines among them ending at a time that may be cut (cutAtWidth)
            java.util.Map<Integer, Integer> widths = new java.util.HashMap<>();
            java.util.Map<Integer, Integer> iterationWidths = new java.util.HashMap<>();
            java.util.Map<Integer, Integer> bareAt = new java.util.HashMap<>();
            boolean replacedSaid = false;
            // the last line counted by width (lines read again after an argument block without its end line, and a
            // bar's later drawings on one line, are not counted again)
            int widthCounted = 0;
            for (String line = in.next(); line != null; line = in.next()) {
                lineNo = in.line();
                if (line.indexOf('\u001B') >= 0) {
                    // a log captured from a terminal keeps its colours: the text is what is read
                    line = COLOUR.matcher(line).replaceAll("");
                }
                if (lineNo > widthCounted) {
                    widths.merge(line.length(), 1, Integer::sum);
                    widthCounted = lineNo;
                }
                if (!replacedSaid && line.indexOf('\uFFFD') >= 0) {
                    // bytes that are no UTF-8 (a log of another encoding, a file damaged): what they spell is not
                    // read, so an argument on such a line may be missing from what the run states
                    LOG.warn("{}:{}: bytes that are not UTF-8 here (read as \\ufffd): an argument or time on this line "
                            + "may not be read; convert the log to UTF-8 (iconv -f LATIN1 -t UTF-8, or its encoding)",
                            source, lineNo);
                    replacedSaid = true;
                }
                if (line.contains("LoRA(") || line.contains("peft_scheme") || line.contains("_target_")) {
                    // a LoRA fine-tuning's adapters (NeMo 2's and Megatron-Bridge's "PEFT: LoRA(..., dim=32, ...)"
                    // and a LoRA class's _target_, NeMo 1's peft_scheme): said, not read (unread); as a message's
                    // statements, which start no run of their own
                    if (line.contains("LoRA(") || LORA_SCHEME.matcher(line).find()) {
                        cur = cur.put(segments, "lora_adapters", "lora", lineNo, true);
                        Matcher lora = LORA_DIM.matcher(line);
                        if (line.contains("LoRA(") && lora.find()) {
                            cur = cur.put(segments, "lora_dim", lora.group(1), lineNo, true);
                        }
                    }
                }
                if (pendingKey != null && !line.isBlank()) {
                    // the children of a YAML key with an empty value: its _target_, or its "- item" list
                    int indent = indent(line);
                    Matcher item = YAML_ITEM.matcher(line);
                    if (indent > pendingIndent || indent == pendingIndent && item.matches()) {
                        Matcher y = YAML.matcher(line);
                        if (y.matches() && y.group(2).equals("_target_") && y.group(3) != null
                                && pendingItems.isEmpty()) {
                            cur = cur.put(segments, pendingKey, unquote(y.group(3)), pendingLine);
                            pendingKey = null;
                            continue;
                        }
                        if (item.matches()) {
                            if (pendingItems.size() < MAX_ITEMS) {
                                pendingItems.add(unquote(item.group(2)));
                            }
                            continue;
                        }
                    } else {
                        if (!pendingItems.isEmpty()) {
                            cur = cur.put(segments, pendingKey, "[" + String.join(", ", pendingItems) + "]",
                                    pendingLine);
                        }
                        pendingKey = null;
                        pendingItems.clear();
                    }
                }
                if (inArgs) {
                    if (argumentsHeader(line) || line.contains("per iteration") && ELAPSED.matcher(line).find()
                            || line.contains("train_step_timing") && STEP_TIMING.matcher(line).find()) {
                        // a block without its end line (a log cut and pasted, a launcher's own filter) before an
                        // iteration line or the next block's header: it ended at its last argument, and the lines
                        // after that one are read again as any other line
                        LOG.warn("{}:{}: the argument block opened at line {} has no 'end of arguments' line: it is "
                                + "taken to end after its last argument (line {})", source, lineNo, argsFrom,
                                lastArgument);
                        inArgs = false;
                        cur.endBlock(lastArgument);
                        afterArguments.add(new LogLine(line, lineNo));
                        in.replay(afterArguments);
                        afterArguments.clear();
                        afterBytes = 0;
                        continue;
                    }
                    if (line.contains("end of arguments")) {
                        inArgs = false;
                        cur.endBlock(lineNo);
                        afterArguments.clear();
                        afterBytes = 0;
                        continue;
                    }
                    Matcher a = ARG_ENTRY.matcher(line);
                    if (a.find()) {
                        if (KEYS.containsKey(a.group(1))) {
                            cur = cur.put(segments, a.group(1), a.group(2), lineNo);
                        }
                        // (another rank's lines between two arguments are no part of the job)
                        afterArguments.clear();
                        afterBytes = 0;
                        lastArgument = lineNo;
                    } else {
                        // the latest lines kept (the summaries a block without its end line needs come last before
                        // the iterations), within MAX_REPLAYED lines and MAX_REPLAYED_CHARS characters
                        afterArguments.add(new LogLine(line, lineNo));
                        afterBytes += line.length();
                        while (afterArguments.size() > MAX_REPLAYED || afterBytes > MAX_REPLAYED_CHARS) {
                            afterBytes -= afterArguments.pollFirst().text().length();
                        }
                    }
                    continue;
                }
                if (argumentsHeader(line)) {
                    if (cur.n == 0 && cur.block > 0) {
                        // the block before ran no iteration (a start that failed: out of memory, a bad argument; or
                        // a second rank's copy of it) and this one starts the job again: what runs is this block's
                        Segment restart = cur.restart(lineNo);
                        segments.set(segments.size() - 1, restart);
                        cur = restart;
                    }
                    cur = cur.configuration(segments, lineNo);
                    cur.block = lineNo;
                    cur.open = true;
                    inArgs = true;
                    argsFrom = lineNo;
                    lastArgument = lineNo;
                    afterArguments.clear();
                    afterBytes = 0;
                    continue;
                }
                Matcher e = ELAPSED.matcher(line);
                Matcher t = STEP_TIMING.matcher(line);
                if (!in.terminated() && ITERATION.matcher(line).find() && !line.contains("per iteration")
                        && !line.contains("train_step_timing")) {
                    // the log's last line, a Megatron iteration line cut before its time: not dropped in silence
                    endsInside(source, lineNo);
                    continue;
                }
                if ((line.contains("per iteration") && TIME_CUT.matcher(line).find()
                        || line.contains("train_step_timing") && STEP_TIME_CUT.matcher(line).find())
                        && (ITERATION.matcher(line).find() || line.contains("Epoch"))) {
                    // not dropped in silence: its step would be missing from the median
                    if (!in.terminated()) {
                        endsInside(source, lineNo);
                        continue;
                    }
                    throw InvalidInputException.atLine(source, lineNo, "an iteration line cut before its time: a log "
                            + "cut or wrapped at a fixed width (a terminal's, cut, fold)? " + CAPTURE_WHOLE);
                }
                Matcher stepUnit = line.contains("train_step_timing in ") ? STEP_TIMING_OTHER_UNIT.matcher(line) : null;
                if (stepUnit != null && stepUnit.find()) {
                    // not left out in silence: a log timed half in s and half in ms would be read as its s half
                    throw InvalidInputException.atLine(source, lineNo, "a step line timed in '"
                            + clip(stepUnit.group(1)) + "', where NeMo's are in s ('train_step_timing in s: T'): "
                            + "convert the log's times to s, or give its runs as a job runs table");
                }
                boolean elapsed = line.contains("per iteration") && e.find();
                Matcher unit = elapsed || !line.contains("per iteration") ? null : ELAPSED_OTHER_UNIT.matcher(line);
                if (unit != null && unit.find()) {
                    // not left out in silence: a log timed half in ms and half in s would be read as its ms half
                    throw InvalidInputException.atLine(source, lineNo, "an iteration line timed in '"
                            + clip(unit.group(1)) + "', where Megatron's are in ms ('elapsed time per iteration "
                            + "(ms): T'): convert the log's times to ms, or give its runs as a job runs table");
                }
                if (elapsed || line.contains("train_step_timing") && t.find()) {
                    Matcher it = ITERATION.matcher(line);
                    long iteration = it.find() ? Long.parseLong(it.group(1)) : -1;
                    // a progress bar's drawing: the training bar's own (the last "Epoch" label before the time; a
                    // validation bar may be drawn on the same line, before or after it)
                    int from = elapsed ? 0 : Math.max(0, line.lastIndexOf("Epoch", t.start()));
                    boolean drawing = !elapsed && iteration < 0;   // (Megatron's and NeMo's own lines number
                    if (drawing) {                                 // themselves)
                        Matcher step = GLOBAL_STEP.matcher(line).region(from, line.length());
                        Matcher bar = PROGRESS.matcher(line).region(from, t.start());
                        if (step.find()) {
                            // the step its metrics name: the same while the bar redraws (the count first, then the
                            // time), resets for a new epoch or counts validation batches (Lightning 1.x), so each
                            // drawing of a step replaces the one before
                            iteration = Long.parseLong(step.group(1));
                        } else if (bar.find()) {
                            // else the bar's count, the finished steps of the epoch
                            iteration = Long.parseLong(bar.group(1) != null ? bar.group(1)
                                    : bar.group(2) != null ? bar.group(2) : bar.group(3));
                            if (iteration == 0) {
                                // the bar reset for a new epoch (no step finished), still showing the last step's
                                // time before its label moves on: no step of its own
                                continue;
                            }
                        } else {
                            drawing = false;
                        }
                    }
                    if (!in.terminated() && !(drawing && line.indexOf(']', t.end()) >= 0)) {
                        // the log was cut inside this line (a job killed, a copy truncated): its time may be too (a
                        // bar's last drawing, which tqdm ends only with the next one's carriage return, is whole
                        // where its metrics close)
                        endsInside(source, lineNo);
                        continue;
                    }
                    // the global batch the line says it ran: Megatron's "global batch size: N", NeMo's
                    // "global_batch_size: N"
                    Matcher gb = elapsed ? ITERATION_BATCH.matcher(line)
                            : STEP_BATCH.matcher(line).region(from, line.length());
                    long said = line.contains(elapsed ? "global batch size" : "global_batch_size") && gb.find()
                            ? (elapsed ? iterationBatch(gb.group(1), source, lineNo) : Long.parseLong(gb.group(1)))
                            : -1;
                    // NeMo 2 / Lightning number the steps within an epoch: they start again each epoch
                    cur.epochs |= line.contains("epoch") || line.contains("Epoch");
                    Matcher ep = EPOCH.matcher(line).region(from, line.length());
                    long epoch = cur.epochs && ep.find() ? Long.parseLong(ep.group(1)) : -1;
                    // nothing after the time (Megatron ends it with " |", a bar closes it with "]"): where the lines
                    // around it go on, a line cut short (leaveOutCut)
                    boolean bare = line.substring(elapsed ? e.end() : t.end()).isBlank();
                    String time = elapsed ? e.group(1) : t.group(1);
                    // tqdm's drawing opens its metrics with '[' and closes them with ']' (NeMo's own bar format, "Epoch
                    // 0 5/12, ... train_step_timing in s=2.42", has neither)
                    boolean unclosed = drawing && line.lastIndexOf('[', t.start()) >= from
                            && line.indexOf(']', t.end()) < 0;
                    if (time.endsWith(".") || unclosed) {
                        // a number is never printed ending in its point, and tqdm closes a whole drawing's metrics:
                        // the line (a bar trimmed to its terminal's width, a log cut or wrapped) cut inside its time
                        throw InvalidInputException.atLine(source, lineNo, (drawing ? "a progress bar's drawing"
                                : "an iteration line") + " cut " + (time.endsWith(".") ? "inside its time '"
                                + clip(time) + "'" : "before its metrics close (']'), its time '" + clip(time)
                                + "' perhaps with it") + ": a log cut or wrapped at a fixed width (a terminal's, cut, "
                                + "fold)? " + CAPTURE_WHOLE);
                    }
                    iterationWidths.merge(line.length(), 1, Integer::sum);
                    if (bare) {
                        bareAt.putIfAbsent(line.length(), lineNo);
                    }
                    // a Megatron line that does not say its batch has it from its consumed samples (a ramp-up's
                    // steps are then told from the job's)
                    long derived = -1;
                    if (elapsed && !(iteration >= 0 && iteration < cur.lastIteration)) {
                        // Megatron's own counts: the run's iterations in all and the samples consumed, which a
                        // restart's lines numbered on from the last (or another run's lines) contradict (an
                        // iteration going back is refused as such, below)
                        Matcher total = ITERATION_TOTAL.matcher(line);
                        if (total.find()) {
                            cur.total(Long.parseLong(total.group(1)), lineNo);
                        }
                        Matcher consumed = CONSUMED.matcher(line);
                        if (consumed.find()) {
                            cur.counted("consumed samples", Long.parseLong(consumed.group(1)), lineNo);
                            derived = cur.consumedStep(iteration, Long.parseLong(consumed.group(1)), said, lineNo);
                        }
                    }
                    if (!elapsed && !drawing) {
                        // (a bar's drawing numbers its step by the count: going back, refused as its iteration)
                        Matcher count = STEP_COUNT.matcher(line).region(from, line.length());
                        long step = -1;
                        long samples = -1;
                        while (count.find()) {
                            cur.counted(count.group(1), Long.parseLong(count.group(2)), lineNo);
                            if (count.group(1).equals("global_step")) {
                                step = Long.parseLong(count.group(2));
                            } else {
                                samples = Long.parseLong(count.group(2));
                            }
                        }
                        if (step >= 0 && samples >= 0) {
                            // NeMo's counts, as Megatron's: a line without its batch has it from their growth
                            derived = cur.consumedStep(step, samples, said, lineNo);
                        }
                    }
                    if (DIVERGED.matcher(line).find()) {
                        cur.diverged.add(lineNo);
                    } else if (SKIPPED.matcher(line).find()) {
                        cur.skipped.add(lineNo);
                    }
                    long batch = said >= 0 ? said : derived;
                    cur.iteration(elapsed ? e.group(1) : t.group(1), elapsed ? 1 : 1000, iteration, epoch, batch,
                            drawing, bare, lineNo);
                    continue;
                }
                if (cur.foreign == 0 && foreignStep(line)) {
                    cur.foreign = lineNo;
                }
                if (cur.untimedBar == 0 && line.contains("Epoch") && line.contains("[")
                        && PROGRESS.matcher(line).find()) {
                    // a training bar whose metrics hold no step time
                    cur.untimedBar = lineNo;
                }
                if (device == null || line.contains("get_device_name") || line.contains("device name")
                        || line.contains("gpu_name") || GPU_INDEX.matcher(line).find()) {
                    String named = device(line);
                    if (named != null) {
                        device = device == null ? named : device;
                        gpuLines.add(new GpuLine(lineNo, named));
                    }
                }
                Matcher m;
                if (line.contains("world size") && (m = WORLD.matcher(line)).find()) {
                    cur = cur.put(segments, "world_size", m.group(1), lineNo);
                    Matcher d = WORLD_DP.matcher(line);
                    if (d.find()) {
                        cur = cur.put(segments, "data_parallel_size", d.group(1), lineNo);
                    }
                    // the summary's degrees, as a message's statements: a block without them takes these, one that
                    // says others is read and the summary's said; a later summary before any block or iteration (a
                    // start that failed after printing it, relaunched) replaces them
                    if (cur.n == 0 && cur.block == 0) {
                        cur.args.entrySet().removeIf(a -> a.getValue().loose() && WORLD_DEGREES.containsValue(
                                a.getKey()));
                    }
                    for (Map.Entry<Pattern, String> degree : WORLD_DEGREES.entrySet()) {
                        Matcher g = degree.getKey().matcher(line);
                        if (g.find()) {
                            cur = cur.put(segments, degree.getValue(), g.group(1), lineNo, true);
                        }
                    }
                    continue;
                }
                if (line.contains("padded vocab") && (m = PADDED.matcher(line)).find()) {
                    cur = cur.put(segments, "padded_vocab_size", m.group(1), lineNo);
                    continue;
                }
                if (line.contains("microbatches") && (m = MICRO.matcher(line)).find()) {
                    cur = cur.put(segments, "num_micro_batches", m.group(1), lineNo);
                    continue;
                }
                if (line.contains("MEMBER") && (m = MEMBER.matcher(line)).find()) {
                    cur = cur.put(segments, "world_size", m.group(1), lineNo);
                    continue;
                }
                Matcher y = YAML.matcher(line);
                if (line.indexOf(':') >= 0 && y.matches() && KEYS.containsKey(y.group(2))) {
                    String v = y.group(3) == null ? "" : stripComment(y.group(3));
                    if (v.isEmpty()) {
                        pendingKey = y.group(2);
                        pendingIndent = y.group(1).length();
                        pendingLine = lineNo;
                        pendingItems.clear();
                    } else {
                        cur = cur.put(segments, y.group(2), unquote(v), lineNo);
                    }
                    continue;
                }
                if (line.indexOf('=') >= 0) {
                    // a dump (a namespace's, a configuration's) states many arguments a line; a message's key=value a
                    // few, which a dump's or an argument block's replace
                    List<String[]> pairs = new ArrayList<>();
                    Matcher p = PAIR.matcher(line);
                    while (p.find()) {
                        if (KEYS.containsKey(p.group(1))) {
                            pairs.add(new String[] {p.group(1), unquote(p.group(2))});
                        }
                    }
                    boolean loose = pairs.size() < 3 && message(line);
                    for (String[] kv : pairs) {
                        cur = cur.put(segments, kv[0], kv[1], lineNo, loose);
                    }
                }
            }
            if (pendingKey != null && !pendingItems.isEmpty()) {
                cur.put(segments, pendingKey, "[" + String.join(", ", pendingItems) + "]", pendingLine);
            }
            cutAtWidth(source, widths, iterationWidths, bareAt);
            if (cut[0] != null && cut[0].cut) {
                // as a plain log cut short is read up to the cut (gunzip -c gives the same lines)
                LOG.warn("{}: the gzip'd log is cut short (a truncated or partly written file): read up to line {}, "
                        + "where it ends", source, lineNo);
            }
        } catch (IOException ex) {
            throw InvalidInputException.unreadable(log, "cannot read the training log", ex);
        } catch (java.io.UncheckedIOException ex) {
            throw InvalidInputException.unreadable(log, "cannot read the training log", ex.getCause());
        }
        if (segments.size() > 1 && segments.get(segments.size() - 1).isEmpty()) {
            segments.remove(segments.size() - 1);
        }
        Segment last = segments.get(segments.size() - 1);
        while (segments.size() > 1 && last.n == 0) {
            // a restart that ran no iteration before the log ends (it crashed again, maybe more than once): no run of
            // its own, and the runs before it are still read; its argument block (Megatron) or its configuration's
            // first statement (a NeMo dump)
            LOG.warn("{}:{}: this {} ran no iteration before the log ends (a restart that failed?): left out", source,
                    last.block > 0 ? last.block : last.line, last.block > 0 ? "argument block" : "configuration");
            segments.remove(segments.size() - 1);
            last = segments.get(segments.size() - 1);
        }
        gpus(source, segments, gpuLines, device);
        for (Segment s : segments) {
            s.encoding = wide[0];
            s.leaveOutCut();
        }
        return segments;
    }

    /** A line naming a GPU ({@link #device(String)}): its number and the name. */
    private record GpuLine(int line, String name) {
    }

    /**
     * Each run's GPU: the first a line names after the run before's last iteration and before the run's first (a
     * second run's preamble names its own machine); where none does, the last named before it, else the log's first
     * ({@code first}, null without one). A line among a run's (the last run's up to the log's end) naming another
     * GPU than the run's is said once: the run's is taken.
     */
    private static void gpus(String source, List<Segment> segments, List<GpuLine> lines, String first) {
        int previous = 0;
        boolean said = false;
        for (int k = 0; k < segments.size(); k++) {
            Segment s = segments.get(k);
            int start = s.n > 0 ? s.lines[0] : Integer.MAX_VALUE;
            // the last run's lines go on to the log's end (a GPU named after them is no other run's)
            int end = k == segments.size() - 1 ? Integer.MAX_VALUE : s.n > 0 ? s.lines[s.n - 1] : previous;
            int after = previous;
            GpuLine own = lines.stream().filter(g -> g.line() > after && g.line() < start).findFirst().orElse(null);
            // without its own, the GPU named last before it (a restart on the machine of the run before), else the
            // log's first
            GpuLine before = lines.stream().filter(g -> g.line() < start).reduce((a, b) -> b).orElse(null);
            s.device = own != null ? own.name() : before != null ? before.name() : first;
            for (GpuLine g : lines) {
                if (!said && s.device != null && g.line() > previous && g.line() <= end && !g.name().equals(s.device)) {
                    // a log of two machines in one run's lines, or two logs joined without a new run's arguments
                    LOG.warn("{}:{}: a second GPU name, {}, where {} names {}: the run's first is taken", source,
                            g.line(), clip(g.name()), own != null ? "line " + own.line() : "the log", clip(s.device));
                    said = true;
                }
            }
            previous = Math.max(previous, end);
        }
    }

    /**
     * Refuses a log cut or wrapped at a fixed width ({@code cut -c1-122}, {@code fold -w 122}, a terminal's copy): its
     * widest lines are many, other lines than iteration lines among them ({@value #CUT_WIDTH_OTHERS} or more), and an
     * iteration line of that width ends at its time, which may be cut there ({@code 505.0} of {@code 5050.5}); a log
     * written whole has its iteration lines go on after their time, or of varying widths beside its other lines.
     */
    private static void cutAtWidth(String source, java.util.Map<Integer, Integer> widths,
            java.util.Map<Integer, Integer> iterationWidths, java.util.Map<Integer, Integer> bareAt) {
        int widest = widths.keySet().stream().mapToInt(Integer::intValue).max().orElse(0);
        Integer line = bareAt.get(widest);
        int others = widths.getOrDefault(widest, 0) - iterationWidths.getOrDefault(widest, 0);
        if (line != null && others >= CUT_WIDTH_OTHERS) {
            throw InvalidInputException.atLine(source, line, "an iteration line that ends at its time at the log's "
                    + "widest, " + widest + " characters, which " + widths.get(widest) + " of its lines reach and none "
                    + "passes: a log cut or wrapped at a fixed width (cut, fold, a terminal's copy), whose times may "
                    + "be cut? " + CAPTURE_WHOLE);
        }
    }

    /** What a message that finds a log cut tells to do. */
    private static final String CAPTURE_WHOLE = "Capture the log whole (redirect it to a file), or give its runs as a "
            + "job runs table";

    /** Says that the log ends inside its last iteration line, which is left out. */
    private static void endsInside(String source, int lineNo) {
        LOG.warn("{}:{}: the log ends inside its last iteration line; that iteration is left out", source, lineNo);
    }

    /** Lines other than iteration lines at a log's widest that, with an iteration line there, mark it cut. */
    private static final int CUT_WIDTH_OTHERS = 2;

    /**
     * The log's text: UTF-8, or UTF-16 where it begins with that encoding's byte-order mark (PowerShell's redirection
     * writes it); a gzip'd log ({@code train.log.gz}, a gzip of one too) read through; another compression or archive
     * refused naming it (its bytes are no text). Where the text's first bytes look like UTF-16 without its byte-order
     * mark, or UTF-32 ({@link #wideEncoding}), {@code wide[0]} names that encoding, for the message that finds no
     * training log in it.
     */
    private static java.io.Reader open(Path log, Cut[] cut, String[] wide) throws IOException {
        java.io.InputStream in = new java.io.BufferedInputStream(org.scaledl.InputFiles.open(log));
        try {
            for (int depth = 0;; depth++) {
                in.mark(HEAD);
                byte[] head = in.readNBytes(HEAD);
                in.reset();
                String kind = compression(head);
                if (kind == null) {
                    wide[0] = wideEncoding(head);
                    boolean utf32 = wide[0] != null && wide[0].startsWith("UTF-32");
                    boolean le = !utf32 && head.length >= 2 && (head[0] & 0xff) == 0xff && (head[1] & 0xff) == 0xfe;
                    boolean be = !utf32 && head.length >= 2 && (head[0] & 0xff) == 0xfe && (head[1] & 0xff) == 0xff;
                    if (le || be) {
                        wide[0] = null;
                    }
                    return new InputStreamReader(in, le || be ? StandardCharsets.UTF_16 : StandardCharsets.UTF_8);
                }
                if (!kind.equals("gzip")) {
                    throw InvalidInputException.inSource(log.toString(), kind + ", not a text log: "
                            + (kind.endsWith("archive") ? "extract the log from it" : "decompress it") + " first (a "
                            + "gzip'd log is read as it is)");
                }
                if (depth == 3) {
                    throw InvalidInputException.inSource(log.toString(), "gzip'd four times over: decompress it");
                }
                try {
                    cut[0] = new Cut(new java.util.zip.GZIPInputStream(in, 1 << 16));
                    in = new java.io.BufferedInputStream(cut[0]);
                } catch (java.io.EOFException e) {
                    throw InvalidInputException.inSource(log.toString(), "a gzip file cut short before its data ("
                            + Files.size(log) + " bytes: a truncated or partly written file)");
                }
            }
        } catch (IOException | RuntimeException e) {
            in.close();
            throw e;
        }
    }

    /**
     * A decompressed stream that ends where its compressed data is cut short (a truncated gzip), as a plain log cut
     * short ends, instead of failing: what was decompressed before the cut is read ({@code gunzip -c} gives the same).
     */
    private static final class Cut extends java.io.FilterInputStream {
        boolean cut;

        Cut(java.io.InputStream in) {
            super(in);
        }

        @Override
        public int read() throws IOException {
            try {
                return cut ? -1 : super.read();
            } catch (java.io.EOFException e) {
                cut = true;
                return -1;
            }
        }

        @Override
        public int read(byte[] b, int off, int len) throws IOException {
            try {
                return cut ? -1 : super.read(b, off, len);
            } catch (java.io.EOFException e) {
                // (an inflater fails only before it has produced anything in the call: nothing is lost)
                cut = true;
                return -1;
            }
        }
    }

    /** The bytes of a log's beginning looked at for its compression and encoding. */
    private static final int HEAD = 512;

    /**
     * The encoding a text's first bytes look like where it is UTF-16 (ASCII text with a NUL byte at every other
     * position, {@code UTF-16LE} or {@code UTF-16BE}) or UTF-32 (three NUL bytes of every four), or null: at least 32
     * bytes, nine in ten of the bytes at the NUL positions NUL and nine in ten of the others not.
     */
    static String wideEncoding(byte[] b) {
        int len = b.length - b.length % 4;
        if (len < 32) {
            return null;
        }
        int[] zeros = new int[4];
        for (int i = 0; i < len; i++) {
            if (b[i] == 0) {
                zeros[i % 4]++;
            }
        }
        int q = len / 4;
        if (zeros[1] + zeros[2] + zeros[3] >= 0.9 * 3 * q && zeros[0] <= 0.1 * q) {
            return "UTF-32LE";
        }
        if (zeros[0] + zeros[1] + zeros[2] >= 0.9 * 3 * q && zeros[3] <= 0.1 * q) {
            return "UTF-32BE";
        }
        if (zeros[1] + zeros[3] >= 0.9 * 2 * q && zeros[0] + zeros[2] <= 0.1 * 2 * q) {
            return "UTF-16LE";
        }
        if (zeros[0] + zeros[2] >= 0.9 * 2 * q && zeros[1] + zeros[3] <= 0.1 * 2 * q) {
            return "UTF-16BE";
        }
        return null;
    }

    /** The compression or archive these first bytes begin, as a noun phrase ("gzip" for gzip), or null. */
    private static String compression(byte[] b) {
        int[] u = new int[b.length];
        for (int i = 0; i < b.length; i++) {
            u[i] = b[i] & 0xff;
        }
        if (u.length >= 2 && u[0] == 0x1f && u[1] == 0x8b) {
            return "gzip";
        }
        if (u.length >= 4 && u[0] == 0x28 && u[1] == 0xb5 && u[2] == 0x2f && u[3] == 0xfd) {
            return "a zstd-compressed file";
        }
        if (u.length >= 6 && u[0] == 0xfd && u[1] == '7' && u[2] == 'z' && u[3] == 'X' && u[4] == 'Z' && u[5] == 0) {
            return "an xz-compressed file";
        }
        if (u.length >= 4 && u[0] == 'B' && u[1] == 'Z' && u[2] == 'h' && u[3] >= '1' && u[3] <= '9') {
            return "a bzip2-compressed file";
        }
        if (u.length >= 4 && u[0] == 'P' && u[1] == 'K' && u[2] == 3 && u[3] == 4) {
            return "a zip archive";
        }
        if (u.length >= 6 && u[0] == '7' && u[1] == 'z' && u[2] == 0xbc && u[3] == 0xaf && u[4] == 0x27
                && u[5] == 0x1c) {
            return "a 7-zip archive";
        }
        return null;
    }

    /**
     * The most lines after an argument block's last argument kept to read again (a block without its end line), the
     * latest ones, and the most characters they hold together.
     */
    private static final int MAX_REPLAYED = 10_000;
    private static final long MAX_REPLAYED_CHARS = 16L << 20;

    /** A piece of a log's text and the line it lies on ({@link Lines}). */
    private record LogLine(String text, int line) {
    }

    /**
     * Pieces of text ending in LF, CR LF or CR (a progress bar redraws after a lone CR), each numbered by the line
     * (ending in LF or CR LF, as editors and {@code grep -n} count them) it lies on; a piece of more than
     * {@link #MAX_LINE} characters is refused.
     */
    private static final class Lines implements AutoCloseable {
        private final Reader in;
        /** Lines to read again before the stream's next, in order. */
        private final ArrayDeque<LogLine> again = new ArrayDeque<>();
        private final String source;
        private final char[] buf = new char[1 << 16];
        private int pos;
        private int end;
        private boolean skipLf;
        private boolean terminated = true;
        /** The line the next piece starts on. */
        private int physical = 1;
        /** The line of the piece {@link #next} returned last. */
        private int line;

        Lines(Reader in, String source) {
            this.in = in;
            this.source = source;
        }

        /** Reads these lines again, in order, before the stream's next. */
        void replay(ArrayDeque<LogLine> lines) {
            lines.descendingIterator().forEachRemaining(again::addFirst);
        }

        /** The next piece, or null at the end. */
        String next() throws IOException {
            if (!again.isEmpty()) {
                LogLine x = again.pollFirst();
                line = x.line();
                return x.text();
            }
            StringBuilder b = null;
            boolean started = false;
            while (true) {
                if (pos == end) {
                    end = in.read(buf, 0, buf.length);
                    pos = 0;
                    if (end <= 0) {
                        end = 0;
                        terminated = b == null;
                        return b == null ? null : b.toString();
                    }
                }
                if (skipLf) {
                    skipLf = false;
                    if (buf[pos] == '\n') {
                        // CR LF: the line's end (a lone CR stays within it)
                        pos++;
                        physical++;
                        continue;
                    }
                }
                if (!started) {
                    started = true;
                    line = physical;
                }
                int i = pos;
                while (i < end && buf[i] != '\n' && buf[i] != '\r') {
                    i++;
                }
                int len = i - pos + (b == null ? 0 : b.length());
                if (len > MAX_LINE) {
                    throw InvalidInputException.atLine(source, line, "a line of more than " + MAX_LINE
                            + " characters: not a text log");
                }
                if (i < end) {
                    String piece = b == null ? new String(buf, pos, i - pos) : b.append(buf, pos, i - pos).toString();
                    skipLf = buf[i] == '\r';
                    physical += buf[i] == '\n' ? 1 : 0;
                    pos = i + 1;
                    terminated = true;
                    return piece;
                }
                if (b == null) {
                    b = new StringBuilder();
                }
                b.append(buf, pos, i - pos);
                pos = end;
            }
        }

        /** The line (LF or CR LF ended, counted from 1) of the piece {@link #next} returned last. */
        int line() {
            return line;
        }

        /** Whether the line {@link #next} returned last ended in a line break (false: the text ended inside it). */
        boolean terminated() {
            return terminated;
        }

        @Override
        public void close() throws IOException {
            in.close();
        }
    }

    private static int indent(String line) {
        int i = 0;
        while (i < line.length() && (line.charAt(i) == ' ' || line.charAt(i) == '\t')) {
            i++;
        }
        return i;
    }

    private static String stripComment(String v) {
        int hash = v.indexOf(" #");
        return (hash >= 0 ? v.substring(0, hash) : v).trim();
    }

    /** A value without the quotes around it (and surrounding blanks); null stays null. */
    private static String unquote(String v) {
        if (v == null) {
            return null;
        }
        String s = v.trim();
        if (s.length() >= 2 && (s.charAt(0) == '\'' || s.charAt(0) == '"') && s.charAt(s.length() - 1) == s.charAt(0)) {
            return s.substring(1, s.length() - 1);
        }
        return s;
    }

    /**
     * Whether a line holding {@code key=value} pairs is a message's rather than a dump's: words of its own besides the
     * pairs (two or more), once a leading {@code [rank0]:}-like prefix and a dump's opener ({@code GPTConfig(},
     * {@code Namespace(}) are set aside. A dump printed a field a line ({@code     tensor_model_parallel_size=2,})
     * has none.
     */
    private static boolean message(String line) {
        String rest = PAIR.matcher(line).replaceAll(" ").replaceFirst("^\\s*(\\[[^\\]]*\\]\\s*:?\\s*)+", "")
                .replaceAll("[A-Za-z_][\\w.]*\\(", " ");
        Matcher w = WORD.matcher(rest);
        int words = 0;
        while (w.find() && words < 2) {
            words++;
        }
        return words >= 2;
    }

    /**
     * The global batch a Megatron iteration line says it ran: a whole number of sequences, 1 or more (a negative or a
     * fraction, which no Megatron prints, was read as its digits before the point, or as no batch said).
     *
     * @throws InvalidInputException naming the line for any other text
     */
    private static long iterationBatch(String text, String source, int line) {
        if (!text.matches("0*[1-9]\\d{0,17}(\\.0+)?")) {
            throw InvalidInputException.atLine(source, line, "global batch size '" + clip(text) + "' on an iteration "
                    + "line is no whole number of sequences (1 or more)");
        }
        return Long.parseLong(text.replaceFirst("\\.0+$", ""));
    }

    /** Whether a line opens Megatron's argument block ({@code ------ arguments ------}). */
    private static boolean argumentsHeader(String line) {
        return line.contains("arguments") && ARG_HEADER.matcher(line).find() && !line.contains("end of arguments");
    }

    /** A word of a message: two letters or more. */
    private static final Pattern WORD = Pattern.compile("[A-Za-z]{2,}");

    /** A GPU name a line prints, or null. */
    private static String device(String line) {
        String name = null;
        int at = line.indexOf("get_device_name");
        if (at >= 0) {
            String rest = line.substring(at + "get_device_name".length());
            int close = rest.indexOf(')');
            rest = close >= 0 ? rest.substring(close + 1) : rest;
            name = rest.replaceFirst("^[\\s:=>'\"-]+", "").replaceFirst("['\"\\s]+$", "");
        } else {
            Matcher m = DEVICE_NAMED.matcher(line);
            if (m.find()) {
                name = m.group(1);
            } else if ((m = SMI_L.matcher(line)).find() || (m = SMI_TABLE.matcher(line)).find()) {
                name = m.group(1);
            }
        }
        if (name == null) {
            return null;
        }
        name = name.trim();
        return name.isEmpty() || name.length() > 100 ? null : name;
    }

    // ---------------------------------------------------------------------------------------------------------------
    // One run's lines

    /**
     * A logged value, the line it is on, whether a message's {@code key=value} stated it ({@code loose}: a line with
     * fewer than three arguments, no argument block, configuration or namespace dump), which any of those replaces,
     * and whether a start that ran no iteration logged it ({@code carried}: the restart's own statement replaces it).
     */
    private record Value(String text, int line, boolean loose, boolean carried) {
        Value(String text, int line, boolean loose) {
            this(text, line, loose, false);
        }

        boolean unset() {
            return isUnset(text);
        }
    }

    /** A statement of a key logged after an argument block and before any iteration ({@link Segment#pending}). */
    private record Statement(String key, String value, int line, boolean loose) {
    }

    /**
     * The keys of a run's parallel layout: a log may state one twice (arguments, then a summary), not differently.
     * (Batch and sequence keys may: NeMo prints a model's maximum sequence beside the data's, and sections' batches;
     * the first stated is taken, as before. An unresolved interpolation, {@code ${model.x}}, is no statement.)
     */
    private static final java.util.Set<String> LAYOUT_KEYS = java.util.Set.of("world_size", "data_parallel_size",
            "tensor_model_parallel_size", "pipeline_model_parallel_size", "context_parallel_size",
            "expert_model_parallel_size", "devices", "num_nodes");

    /**
     * The keys of a run's model's sizes: as the layout's, a log may state one twice, not differently (which model ran
     * is not for the reader to guess either). The vocabulary a tokenizer's section states is not one of them.
     */
    private static final java.util.Set<String> MODEL_KEYS = java.util.Set.of("hidden_size", "num_layers",
            "num_attention_heads", "num_query_groups", "ffn_hidden_size", "kv_channels", "padded_vocab_size",
            "num_experts", "moe_router_topk", "moe_ffn_hidden_size");

    /** Whether two stated values are the same number (64 and 64.0), or the same text where either is no number. */
    private static boolean sameNumber(String a, String b) {
        try {
            return decimal(a.trim()) == decimal(b.trim());
        } catch (NumberFormatException e) {
            return a.trim().equalsIgnoreCase(b.trim());
        }
    }

    /**
     * A number as a log writes it: a finite plain decimal ({@link CsvTable#parseNumber}: not Java's {@code 0x1p1},
     * {@code 2.41d}, {@code 2.41f}, which no log writes, nor {@code Infinity}).
     *
     * @throws NumberFormatException for any other text, Java's other number syntax included
     */
    private static double decimal(String text) {
        double x = CsvTable.parseNumber(text);
        if (!Double.isFinite(x)) {
            throw new NumberFormatException("not a finite number: " + text);
        }
        return x;
    }

    private static boolean isUnset(String v) {
        return v.isEmpty() || v.equals("None") || v.equals("null") || v.equals("~") || v.equals("none")
                || v.equals("Null") || v.equals("NULL");
    }

    /** What a log says about one run. */
    private static final class Segment {
        final String source;
        final int line;
        final Map<String, Value> args = new LinkedHashMap<>();
        double[] ms = new double[64];
        /** Per logged iteration, the global batch its line says it ran (-1: not said), and its line. */
        long[] batches = new long[64];
        int[] lines = new int[64];
        /** Per logged iteration, whether its line ends at its time (nothing after it: maybe cut short). */
        boolean[] bare = new boolean[64];
        int n;
        /** The first Megatron iteration line ("elapsed time per iteration"), and the first NeMo step line, or 0. */
        int megatronLine;
        int stepLine;
        /**
         * The line its latest argument block opens on (0: none), whether that block is still being read, and the
         * arguments of a block that ran no iteration which this one replaces (null: none), to say where they differ.
         */
        int block;
        boolean open;
        Map<String, Value> replaced;
        int replacedAt;
        /**
         * What lines after its argument block state before its first iteration, in order: the run's own summaries
         * (merged when an iteration comes, as any statement), or a start that failed and the restart's preamble
         * (carried into the restart where another argument block comes first: {@link #restart}).
         */
        final List<Statement> pending = new ArrayList<>();
        /** Whether the last logged iteration is a progress bar's drawing (which a redrawing replaces). */
        boolean lastDrawing;
        long lastIteration = Long.MIN_VALUE;
        /** The epoch of the last iteration line, where lines say it (-1: not said). */
        long lastEpoch = -1;
        /** Whether its iteration lines number steps within epochs (so their numbers go back at each new epoch). */
        boolean epochs;
        /** The last step count and consumed samples its step lines say ({@link #STEP_COUNT}; -1: none yet). */
        long lastStep = -1;
        long lastConsumed = -1;
        /**
         * The last iteration line's number (Megatron's iteration, NeMo's global step) and consumed samples (-1: none
         * yet) for {@link #consumedStep}.
         */
        long consumedIteration = -1;
        long consumedAt = -1;
        /** The batch the last line's consumed samples gave it ({@link #consumedStep}; -1: none). */
        long lastDerived = -1;
        /** The iteration lines whose consumed samples grew by other than their iterations times their batch. */
        int consumedOff;
        int consumedChecked;
        int consumedFirstOff;
        String consumedSeen = "";

        /**
         * An iteration line's consumed samples against the line before's: they grow by the iterations between the two
         * times the global batch the line says (a ramp-up's batch grows between lines, so a line after one of another
         * batch is not compared). A line that says no batch ({@code batch} -1) has the batch they grew by, where each
         * iteration since the line before can have run it alike (-1 otherwise, and for a line that says one).
         */
        long consumedStep(long iteration, long consumed, long batch, int lineNo) {
            if (batch < 0 && iteration == consumedIteration && consumed == consumedAt) {
                // the same line again (a log copied twice): the same batch
                return lastDerived;
            }
            long derived = -1;
            if (batch < 0 && iteration > consumedIteration && consumedIteration >= 0 && consumedAt >= 0
                    && consumed > consumedAt && (consumed - consumedAt) % (iteration - consumedIteration) == 0) {
                // the batch the iterations since the line before ran, each alike
                derived = (consumed - consumedAt) / (iteration - consumedIteration);
            }
            lastDerived = derived;
            if (iteration > consumedIteration && consumedIteration >= 0 && consumedAt >= 0 && batch > 0
                    && (n == 0 || batches[n - 1] == batch)) {
                consumedChecked++;
                long expected = (iteration - consumedIteration) * batch;
                if (consumed - consumedAt != expected) {
                    if (consumedOff++ == 0) {
                        consumedFirstOff = lineNo;
                        consumedSeen = (consumed - consumedAt) + " over " + (iteration - consumedIteration)
                                + " iteration" + (iteration - consumedIteration == 1 ? "" : "s") + " of global batch "
                                + batch;
                    }
                }
            }
            if (iteration >= 0) {
                consumedIteration = iteration;
                consumedAt = consumed;
            }
            return derived;
        }

        /** How many times each step between two numbered iteration lines occurs. */
        final java.util.Map<Long, Integer> steps = new java.util.HashMap<>();

        /** The step between numbered iteration lines most of them take (the smaller of a tie); 0 without any. */
        int loggedEvery() {
            return steps.entrySet().stream().max(java.util.Map.Entry.<Long, Integer>comparingByValue()
                    .thenComparing(java.util.Map.Entry.comparingByKey(java.util.Comparator.reverseOrder())))
                    .map(e -> (int) Math.min(Integer.MAX_VALUE, e.getKey())).orElse(0);
        }

        /** The iterations in all its Megatron lines say ({@code iteration N/M}'s M; -1: none yet), and where first. */
        long total = -1;
        int totalLine;

        /**
         * A Megatron line's iterations in all: every line of a run says the same, so another is another run's lines
         * (a second job appended, numbered on), refused as a restart without its arguments.
         */
        void total(long value, int lineNo) {
            if (total >= 0 && value != total) {
                throw InvalidInputException.atLine(source, lineNo, "iteration N/" + value + " after lines of N/" + total
                        + " (line " + totalLine + "): another run's lines, numbered on from this one's; the run starts "
                        + "again without its arguments (split the log, or keep one run's lines)");
            }
            if (total < 0) {
                total = value;
                totalLine = lineNo;
            }
        }
        /** The iteration lines that diverged ({@link #DIVERGED}), and those that skipped their update. */
        final List<Integer> diverged = new ArrayList<>();
        final List<Integer> skipped = new ArrayList<>();
        /** The first line that looks like another training loop's step line (TorchTitan's, Trainer's), or 0. */
        int foreign;
        /** The first line with a training progress bar that shows no {@code train_step_timing}, or 0. */
        int untimedBar;
        String device;
        /** The encoding the log's bytes look like where it is not UTF-8 ({@link #wideEncoding}), or null. */
        String encoding;

        Segment(String source, int line) {
            this.source = source;
            this.line = line;
        }

        boolean isEmpty() {
            return args.isEmpty() && n == 0;
        }

        /** The segment configuration at {@code lineNo} belongs to: this, or a new one after iterations. */
        Segment configuration(List<Segment> all, int lineNo) {
            if (n == 0) {
                return this;
            }
            Segment s = new Segment(source, lineNo);
            all.add(s);
            return s;
        }

        Segment put(List<Segment> all, String key, String value, int lineNo) {
            return put(all, key, value, lineNo, false);
        }

        /**
         * Puts a logged value; a message's ({@code loose}) never starts a run of its own after this one's iterations
         * and gives way to an argument block's or a dump's, each said where they differ; two other statements that
         * differ: the layout's and the model's refused, the others' first taken, said.
         */
        Segment put(List<Segment> all, String key, String value, int lineNo, boolean loose) {
            if (block > 0 && !open && n == 0) {
                // after an argument block, before any iteration: the run's, or a failed start's and a restart's
                pending.add(new Statement(key, value, lineNo, loose));
                return this;
            }
            return merge(all, key, value, lineNo, loose);
        }

        /** Ends its argument block, saying where a block it replaces (one that ran no iteration) differed. */
        void endBlock(int lineNo) {
            open = false;
            if (replaced != null) {
                // (a second copy of the same block, as a launcher that logs every rank writes it, says nothing)
                List<String> differ = new ArrayList<>();
                replaced.forEach((k, was) -> {
                    Value is = args.get(k);
                    if (is != null && !was.unset() && !is.unset() && !sameNumber(was.text(), is.text())) {
                        differ.add(k + " " + clip(was.text()) + " -> " + clip(is.text()));
                    }
                });
                if (!differ.isEmpty()) {
                    LOG.warn("{}:{}: the arguments at line {} ran no iteration (a start that failed?): this block "
                            + "replaces them ({}{})", source, block, replacedAt, String.join(", ",
                            differ.subList(0, Math.min(5, differ.size()))),
                            differ.size() > 5 ? ", " + (differ.size() - 5) + " more" : "");
                }
                replaced = null;
            }
        }

        /**
         * The run a new argument block starts where this one's block ran no iteration: what the lines after this
         * block stated (the failed start's own summaries, or the restart's preamble: a log does not say which), each
         * key's latest statement, carried so that the restart's own statement replaces it.
         */
        Segment restart(int lineNo) {
            // (the run is the restart's: its line is the restart block's)
            Segment r = new Segment(source, lineNo);
            r.replaced = new LinkedHashMap<>(args);
            r.replacedAt = block;
            // what the log stated before the replaced block (a launcher's preamble, printed once where a second
            // rank's copy of the block follows), carried as well
            args.forEach((k, v) -> {
                if (v.line() < block) {
                    r.args.put(k, new Value(v.text(), v.line(), v.loose(), true));
                }
            });
            for (Statement st : pending) {
                String k = KEYS.get(st.key());
                Value old = r.args.get(k);
                if (old == null || !isUnset(st.value().trim()) || old.unset()) {
                    r.args.put(k, new Value(st.value().trim(), st.line(), st.loose(), true));
                }
            }
            return r;
        }

        /** {@link #put}'s statement merged into the run's arguments. */
        private Segment merge(List<Segment> all, String key, String value, int lineNo, boolean loose) {
            String k = KEYS.get(key);
            String v = value.trim();
            if (loose && n > 0) {
                // a message after the run's iterations (a checkpoint's, an evaluation's) is no new run's arguments
                Value stated = args.get(k);
                if (stated != null && !isUnset(v) && !sameNumber(stated.text(), v)) {
                    LOG.warn("{}:{}: {}={} in a message after the run's iterations is not read (line {} says {})",
                            source, lineNo, k, clip(v), stated.line(), clip(stated.text()));
                }
                return this;
            }
            Segment s = configuration(all, lineNo);
            Value old = s.args.get(k);
            if (old != null && old.carried() && !isUnset(v)) {
                // the restart's own statement of what a start before it logged after its arguments
                s.args.put(k, new Value(v, lineNo, loose));
                return s;
            }
            boolean differ = old != null && !isUnset(v) && !old.unset() && !v.startsWith("${")
                    && !old.text().startsWith("${") && !sameNumber(old.text(), v);
            if (old == null || old.unset() && !isUnset(v)) {
                s.args.put(k, new Value(v, lineNo, loose));
            } else if (old.loose() != loose) {
                // an argument block or a configuration dump says what ran; a message's key=value gives way to it
                if (!loose) {
                    s.args.put(k, new Value(v, lineNo, false));
                }
                if (differ) {
                    Value message = loose ? new Value(v, lineNo, true) : old;
                    Value stated = loose ? old : new Value(v, lineNo, false);
                    LOG.warn("{}:{}: {}={} in a message is not read: the run's arguments at line {} say {}", source,
                            message.line(), k, clip(message.text()), stated.line(), clip(stated.text()));
                }
            } else if (differ && !LAYOUT_KEYS.contains(k) && !MODEL_KEYS.contains(k)) {
                LOG.warn("{}:{}: {} {} here, but {} at line {}: the first is taken", source, lineNo, k, clip(v),
                        clip(old.text()), old.line());
            } else if (differ) {
                // two statements of the job's layout, or of its model's sizes, that disagree: which one ran is not
                // for the reader to guess
                throw InvalidInputException.atLine(source, lineNo, k + " " + clip(v) + " here, but "
                        + clip(old.text()) + " at line " + old.line() + ": the run states its "
                        + (LAYOUT_KEYS.contains(k) ? "layout" : "model") + " twice, differently (a log of two runs "
                        + "needs each run's arguments before its iterations" + (LAYOUT_KEYS.contains(k) ? ""
                        : "; a multimodal model's encoder stated beside its language model is not read from a log: "
                        + "write its runs table by hand, docs/formats.md") + ")");
            }
            return s;
        }

        /**
         * One logged iteration's line: its time ({@code scale} 1: ms, Megatron's; 1000: s, NeMo's), its number
         * ({@code -1}: none), epoch, global batch ({@code -1}: not said), whether it is a progress bar's drawing and
         * whether nothing follows its time.
         */
        void iteration(String text, double scale, long iteration, long epoch, long batch, boolean drawing,
                boolean bareLine, int lineNo) {
            if (n == 0 && !pending.isEmpty()) {
                // the statements after the argument block are this run's: merged as any statement
                List<Statement> after = List.copyOf(pending);
                pending.clear();
                after.forEach(st -> merge(List.of(), st.key(), st.value(), st.line(), st.loose()));
            }
            boolean megatron = scale == 1;
            int other = megatron ? stepLine : megatronLine;
            if (other > 0) {
                // Megatron's and NeMo's lines for the same steps (two loggers of one job, or two logs joined): each
                // step would count twice
                throw InvalidInputException.atLine(source, lineNo, (megatron ? "a Megatron iteration line ('elapsed "
                        + "time per iteration (ms)')" : "a NeMo step line ('train_step_timing')") + " in a run whose "
                        + "line " + other + " is " + (megatron ? "a NeMo step line ('train_step_timing')"
                        : "a Megatron iteration line ('elapsed time per iteration (ms)')") + ": the two formats "
                        + "time the same steps, which would count twice (keep one format's lines, or split the log)");
            }
            if (megatron && megatronLine == 0) {
                megatronLine = lineNo;
            } else if (!megatron && stepLine == 0) {
                stepLine = lineNo;
            }
            boolean redrawn = iteration >= 0 && iteration == lastIteration && epoch == lastEpoch;
            // steps numbered within epochs go back only where a new epoch begins (its number, where the line says it)
            boolean newEpoch = epochs && (epoch < 0 || lastEpoch < 0 || epoch > lastEpoch);
            if (iteration >= 0 && lastIteration >= 0 && iteration < lastIteration && !newEpoch) {
                // a restart (or two logs joined) without its arguments: its warm-up would mix into this run's median
                throw InvalidInputException.atLine(source, lineNo, "iteration " + iteration + " after iteration "
                        + lastIteration + ": the run starts again without its arguments (split the log, or keep one "
                        + "run's lines)");
            }
            double x;
            try {
                x = decimal(text) * scale;
            } catch (NumberFormatException e) {
                x = Double.NaN;
            }
            if (!(x >= JobRuns.MIN_MILLIS && x <= JobRuns.MAX_MILLIS)) {
                throw InvalidInputException.atLine(source, lineNo, "iteration time '" + clip(text) + "'"
                        + (scale == 1 ? " ms" : " s") + " is not a number of " + JobRuns.MIN_MILLIS + ".."
                        + JobRuns.MAX_MILLIS + " ms");
            }
            if (redrawn && !drawing && !lastDrawing && !(bare[n - 1] && !bareLine)) {
                // a step line (no bar's drawing) that repeats the step before: the same line again is dropped; another
                // time for the same step is another job's, or another run's
                if (x == ms[n - 1] && batch == batches[n - 1]) {
                    return;
                }
                // (what differs is said: the time, else the global batch)
                throw InvalidInputException.atLine(source, lineNo, "iteration " + iteration + " again, " + (x
                        != ms[n - 1] ? CsvTable.plain(round(x)) + " ms here but " + CsvTable.plain(round(ms[n - 1]))
                        + " ms" : "global batch " + (batch < 0 ? "not said" : batch) + " here but "
                        + (batches[n - 1] < 0 ? "not said" : batches[n - 1])) + " at line "
                        + lines[n - 1] + ": two runs' lines mixed in one log? (split the log, or keep one run's "
                        + "lines)");
            }
            if (redrawn) {
                // a progress bar redraws a step as its figures arrive (the count first, then the step's own time):
                // the last drawing of a step is its iteration (and a step's line logged whole replaces its line cut
                // short)
                batches[n - 1] = batch;
                lines[n - 1] = lineNo;
                ms[n - 1] = x;
                bare[n - 1] = bareLine;
                lastDrawing = drawing;
                return;
            }
            if (n == ms.length) {
                ms = Arrays.copyOf(ms, n * 2);
                batches = Arrays.copyOf(batches, n * 2);
                lines = Arrays.copyOf(lines, n * 2);
                bare = Arrays.copyOf(bare, n * 2);
            }
            batches[n] = batch;
            lines[n] = lineNo;
            bare[n] = bareLine;
            ms[n++] = x;
            if (iteration >= 0 && lastIteration >= 0 && iteration > lastIteration) {
                steps.merge(iteration - lastIteration, 1, Integer::sum);
            }
            lastIteration = iteration;
            lastEpoch = epoch;
            lastDrawing = drawing;
        }

        /**
         * A step line's {@code global_step} or {@code consumed_samples}: going back, the run started again (a
         * second job appended under a new epoch's label, whose own steps restart), refused as any restart without
         * its arguments.
         */
        void counted(String what, long value, int lineNo) {
            boolean step = what.equals("global_step");
            long last = step ? lastStep : lastConsumed;
            if (value < last) {
                throw InvalidInputException.atLine(source, lineNo, what + " " + value + " after " + last + ": "
                        + (what.equals("consumed samples") ? "Megatron's count never goes back within a run"
                        : "Lightning's count never goes back within a run, not even at a new epoch") + "; the run "
                        + "starts again without its arguments (split the log, or keep one run's lines)");
            }
            if (step) {
                lastStep = value;
            } else {
                lastConsumed = value;
            }
        }

        /**
         * Says the iteration lines the median takes ({@code kept}, after warm-up) that diverged, and those that
         * skipped their update where they are more than {@link #SKIPPED_SHARE} of them (an fp16 run's loss scaler
         * skips a few).
         */
        void sayUnsound(String which, int[] kept) {
            java.util.Set<Integer> timed = new java.util.HashSet<>();
            for (int line : kept) {
                timed.add(line);
            }
            List<Integer> nan = diverged.stream().filter(timed::contains).toList();
            List<Integer> skip = skipped.stream().filter(timed::contains).toList();
            if (!nan.isEmpty()) {
                LOG.warn("{}:{}: {}{} of the {} iterations the median takes diverged (a NaN loss or NaN iteration: "
                        + "line{} {}): their times are in the median as logged, and a diverged job's step is not its "
                        + "steady state", source, nan.get(0), which, nan.size(), kept.length,
                        nan.size() == 1 ? "" : "s", shortList(nan, ""));
            }
            if (skip.size() > SKIPPED_SHARE * kept.length) {
                // a loss scaler's occasional overflow is an fp16 run's normal; more than a twentieth is not
                LOG.warn("{}:{}: {}{} of the {} iterations the median takes skipped their update (a loss scaler's "
                        + "overflow: line{} {}): their times are in the median as logged, without the optimizer's "
                        + "step", source, skip.get(0), which, skip.size(), kept.length, skip.size() == 1 ? "" : "s",
                        shortList(skip, ""));
            }
        }

        /**
         * Leaves out the iteration lines cut short: a line whose time is the last thing on it where the iteration
         * lines beside it in its run go on after their time (a job killed while writing it, then restarted: its
         * time may be cut too, {@code 50} of {@code 5030.5}), said naming them. A run whose lines all end at their
         * time writes them so.
         */
        void leaveOutCut() {
            if (n < 2) {
                return;
            }
            List<Integer> cut = new ArrayList<>();
            int k = 0;
            for (int i = 0; i < n; i++) {
                if (bare[i] && (i == 0 || !bare[i - 1]) && (i == n - 1 || !bare[i + 1])) {
                    cut.add(lines[i]);
                    continue;
                }
                ms[k] = ms[i];
                batches[k] = batches[i];
                lines[k] = lines[i];
                bare[k++] = bare[i];
            }
            if (cut.isEmpty()) {
                return;
            }
            n = k;
            LOG.warn("{}:{}: {} nothing after {} time where the iteration lines beside {} go on: cut short (a job "
                    + "killed while writing, then restarted?), left out", source, cut.get(0), cut.size() == 1
                    ? "an iteration line has"
                    : cut.size() + " iteration lines (lines " + shortList(cut, "") + ") have",
                    cut.size() == 1 ? "its" : "their", cut.size() == 1 ? "it" : "them");
        }

        /** Up to five numbers, and how many more {@code things} (" sizes", or nothing). */
        private static String shortList(java.util.Collection<? extends Number> xs, String things) {
            List<String> said = xs.stream().limit(5).map(String::valueOf).toList();
            return String.join(", ", said) + (xs.size() > 5 ? " and " + (xs.size() - 5) + " more" + things : "");
        }

        // --- typed reads -------------------------------------------------------------------------------------------

        boolean has(String key) {
            Value v = args.get(key);
            return v != null && !v.unset();
        }

        String text(String key) {
            return has(key) ? args.get(key).text() : null;
        }

        /** A positive {@code int} value, or null when not logged. */
        Integer positive(String key) {
            if (!has(key)) {
                return null;
            }
            Value v = args.get(key);
            String t = v.text();
            long x;
            try {
                x = Long.parseLong(t.endsWith(".0") ? t.substring(0, t.length() - 2) : t);
            } catch (NumberFormatException e) {
                if (t.matches("[0-9]{19,}")) {
                    throw InvalidInputException.atLine(source, v.line(), key + " = " + clip(t) + " is out of range "
                            + "(1.." + Integer.MAX_VALUE + ")");
                }
                throw InvalidInputException.atLine(source, v.line(), key + " must be a positive integer, got '"
                        + clip(t) + "'");
            }
            if (x < 1 || x > Integer.MAX_VALUE) {
                throw InvalidInputException.atLine(source, v.line(), key + " = " + x + " is out of range (1.."
                        + Integer.MAX_VALUE + ")");
            }
            return (int) x;
        }

        int positive(String key, int dflt) {
            Integer x = positive(key);
            return x == null ? dflt : x;
        }

        /** A True/False value, {@code dflt} when not logged. */
        boolean flag(String key, boolean dflt) {
            if (!has(key)) {
                return dflt;
            }
            Value v = args.get(key);
            return flagWord(v.text()).orElseThrow(() -> InvalidInputException.atLine(source, v.line(), key
                    + " must be True or False, got '" + clip(v.text()) + "'"));
        }

        /**
         * A flag's word: True, 1 or yes; False, 0 or no (any case, quoted or not: a configuration dump may print
         * {@code 'false'}); empty for any other text.
         */
        static Optional<Boolean> flagWord(String text) {
            String t = text.length() >= 2 && (text.startsWith("'") && text.endsWith("'")
                    || text.startsWith("\"") && text.endsWith("\"")) ? text.substring(1, text.length() - 1) : text;
            return switch (t.toLowerCase(Locale.ROOT)) {
                case "true", "1", "yes" -> Optional.of(true);
                case "false", "0", "no" -> Optional.of(false);
                default -> Optional.empty();
            };
        }

        /** A rate in [0, 1], or null. */
        Double rate(String key) {
            if (!has(key)) {
                return null;
            }
            Value v = args.get(key);
            double x;
            try {
                x = decimal(v.text());
            } catch (NumberFormatException e) {
                x = Double.NaN;
            }
            if (!(x >= 0 && x <= 1)) {
                throw InvalidInputException.atLine(source, v.line(), key + " must be a number in [0, 1], got '"
                        + clip(v.text()) + "'");
            }
            return x;
        }

        InvalidInputException bad(String key, String message) {
            Value v = args.get(key);
            return v == null ? InvalidInputException.inSource(source, message)
                    : InvalidInputException.atLine(source, v.line(), message);
        }

        // --- the run -----------------------------------------------------------------------------------------------

        /** The iteration times a run's median takes, and their lines, in the log's order. */
        private record Kept(double[] ms, int[] lines) {
        }

        /**
         * The iteration times after the first {@code drop}, of the iterations that ran the job's global batch: a line
         * saying another (Megatron's {@code rampup_batch_size}, NeMo's, grows it over the first iterations) times a
         * smaller step, so it is left out, and said; where none ran it, the run is refused.
         */
        private Kept steady(String which, int drop) {
            Integer gbs = has("global_batch_size") ? positive("global_batch_size") : null;
            double[] kept = new double[n - drop];
            int[] keptLines = new int[n - drop];
            int k = 0;
            int other = 0;
            int straddled = 0;
            int first = 0;
            java.util.SortedSet<Long> seen = new java.util.TreeSet<>();
            for (int i = drop; i < n; i++) {
                boolean said = gbs != null && batches[i] >= 0;
                boolean ramp = said && batches[i] != gbs;
                // a Megatron line's time is the mean over the iterations since the line before (its log_interval):
                // the first at the job's batch after one of another may hold steps of the ramp, and goes too (a NeMo
                // step line times its own step)
                boolean after = !ramp && said && megatronLine > 0 && i > 0 && batches[i - 1] >= 0
                        && batches[i - 1] != gbs;
                if (ramp || after) {
                    if (other + straddled == 0) {
                        first = lines[i];
                    }
                    if (ramp) {
                        other++;
                        seen.add(batches[i]);
                    } else {
                        straddled++;
                    }
                } else {
                    keptLines[k] = lines[i];
                    kept[k++] = ms[i];
                }
            }
            if (k == 0 && other + straddled > 0) {
                throw InvalidInputException.atLine(source, first, which + (other > 0 ? "every iteration after warm-up "
                        + "ran a global batch of " + shortList(seen, " sizes") + ", not global_batch_size " + gbs
                        + " (a batch-size ramp-up, rampup_batch_size, that had not ended, or the arguments of another "
                        + "run)"
                        : "the one iteration line after warm-up follows a line of another global batch than "
                        + "global_batch_size " + gbs + " (a batch-size ramp-up), so its logged mean may hold the "
                        + "ramp's steps") + ": no iteration times the job's batch");
            }
            boolean unsaid = true;
            for (int i = drop; i < n && unsaid; i++) {
                unsaid = batches[i] < 0;
            }
            if (has("rampup_batch_size") && unsaid && n > drop) {
                // a ramp the log sets, and lines that do not say their batch: the steps of the ramp cannot be told
                // from the job's
                LOG.warn("{}:{}: {}rampup_batch_size {} is logged, but the iteration lines do not say their global "
                        + "batch: steps of the ramp (smaller batches) may be timed as the job's global_batch_size {} "
                        + "(give runs --warmup past the ramp's iterations)", source, args.get("rampup_batch_size")
                        .line(), which, clip(text("rampup_batch_size")), gbs == null ? "(not logged)" : gbs);
            }
            if (other + straddled > 0) {
                LOG.warn("{}:{}: {}{} of {} iteration lines after warm-up left out of the median, which takes the {} "
                        + "that ran global_batch_size {}: {}{}", source, first, which, other + straddled, n - drop, k,
                        gbs, other > 0 ? other + " ran a global batch of " + shortList(seen, " sizes")
                        + " (a batch-size ramp-up)" : "", straddled > 0 ? (other > 0 ? ", and " : "") + straddled + " followed a line "
                        + "of another batch (a logged mean may hold the ramp's steps)" : "");
            }
            return new Kept(Arrays.copyOf(kept, k), Arrays.copyOf(keptLines, k));
        }

        /** A time to a tenth of a millisecond, as the log's lines give it. */
        private static double round(double ms) {
            return Math.round(ms * 10) / 10.0;
        }

        Run run(int index, int count, int warmup, TransformerSpec model, Path transformer) {
            String which = count > 1 ? "run " + index + " (from line " + line + "): " : "";
            if (n == 0) {
                throw InvalidInputException.inSource(source, which + "no iteration lines ('iteration N/M | ... | "
                        + "elapsed time per iteration (ms): T' or 'train_step_timing in s: T'): " + (foreign > 0
                        ? "line " + foreign + " is a step line of another training loop (TorchTitan's 'step: N  "
                        + "loss: ...  tps: T', Hugging Face Trainer's, or DeepSpeed's without Megatron's iteration "
                        + "lines), which this reader does not read: give its runs as a job runs table "
                        + "(docs/formats.md), a step's time as measured_ms (DeepSpeed's: 1000 x the global batch / "
                        + "SamplesPerSec) or TorchTitan's tps (tokens per second per GPU) as tokens_per_s_per_gpu"
                        : untimedBar > 0 ? "line " + untimedBar + " is a training progress bar whose metrics show no "
                        + "train_step_timing (NeMo's exp_manager adds it with log_step_timing, its default): log it, "
                        + "or give the runs as a job runs table (docs/formats.md)"
                        : encoding != null ? "read as UTF-8 it is no training log, and its bytes look like " + encoding
                        + " text (" + (encoding.startsWith("UTF-16") ? "a NUL byte at every other position, and no "
                        + "byte-order mark to say so" : "three NUL bytes in every four") + "): convert it to UTF-8 "
                        + "(iconv -f " + encoding + " -t UTF-8 LOG > LOG.utf8)"
                        : "not a training log, or one that stopped before its first logged iteration"));
            }
            // by default at least the first logged iteration goes: it holds the start-up (allocation, autotuning,
            // communicators), several times a steady step; a short log drops a third, rounded up (the start-up may
            // take two iterations: of 5, the first 2)
            int drop = warmup == DEFAULT_WARMUP ? (n < FEW ? (n + 2) / 3 : 10) : warmup;
            if (drop >= n) {
                throw InvalidInputException.inSource(source, which + "no iterations after warm-up: " + n
                        + " logged, the first " + drop + " dropped" + (warmup == DEFAULT_WARMUP ? " (a first "
                        + "iteration holds the start-up; to time it anyway, give the warm-up: --warmup 0)" : ""));
            }
            Kept steady = steady(which, drop);
            sayUnsound(which, steady.lines());
            double[] inOrder = steady.ms();
            double[] halves = {Medians.of(Arrays.copyOf(inOrder, inOrder.length / 2)),
                Medians.of(Arrays.copyOfRange(inOrder, inOrder.length / 2, inOrder.length))};
            double[] kept = inOrder.clone();
            Arrays.sort(kept);
            int k = kept.length;
            double median = Medians.of(kept);
            if (k >= 4 && kept[3 * k / 4] - kept[k / 4] > MAX_SPREAD * median) {
                // a steady run's iterations take about one time; two times (a step that changed speed, two jobs in
                // one log without their arguments between) make a median that may be no iteration's: said at the
                // first iteration line far from it (one of the quartiles is), naming the first few
                List<String> far = new ArrayList<>();
                int farCount = 0;
                int first = line;
                for (int i = 0; i < k; i++) {
                    if (Math.abs(inOrder[i] - median) > MAX_SPREAD / 2 * median) {
                        if (farCount == 0) {
                            first = steady.lines()[i];
                        }
                        if (farCount < 3) {
                            far.add(steady.lines()[i] + " (" + CsvTable.plain(round(inOrder[i])) + " ms)");
                        }
                        farCount++;
                    }
                }
                LOG.warn("{}:{}: {}its {} iteration times after warm-up spread widely (quartiles {} and {} ms around "
                        + "the median {} ms; the first half's median {} ms, the second half's {} ms; more than {} % "
                        + "from the median: line{} {}{}): the median may be no iteration's time (a run that changed "
                        + "speed, two runs in one log, or a start-up longer than the warm-up: --warmup)", source,
                        first, which, k, CsvTable.plain(round(kept[k / 4])), CsvTable.plain(round(kept[3 * k / 4])),
                        CsvTable.plain(round(median)), CsvTable.plain(round(halves[0])),
                        CsvTable.plain(round(halves[1])), Math.round(MAX_SPREAD / 2 * 100), farCount == 1 ? "" : "s",
                        String.join(", ", far), farCount > 3 ? " and " + (farCount - 3) + " more" : "");
            }

            List<String> missing = new ArrayList<>();
            String seqKey = has("sequence_length") ? "sequence_length" : "seq_length";
            for (String key : List.of(seqKey, "micro_batch_size", "global_batch_size")) {
                if (!has(key)) {
                    missing.add(key);
                }
            }
            boolean hasWorld = has("data_parallel_size") || has("world_size") || has("num_micro_batches")
                    || devicesTimesNodes() != null;
            if (!hasWorld) {
                missing.add("world_size (or data_parallel_size)");
            }
            if (has("num_layers_per_virtual_pipeline_stage") && !has("virtual_pipeline_model_parallel_size")
                    && !has("num_layers")) {
                missing.add("num_layers");
            }
            // the model's sizes come from --transformer as well; the job's only from the log (or a table row)
            List<String> forModel = new ArrayList<>();
            if (model == null) {
                for (String key : List.of("hidden_size", "num_layers", "num_attention_heads", "ffn_hidden_size")) {
                    if (!has(key) && !missing.contains(key)) {
                        forModel.add(key);
                    }
                }
                if (!has("padded_vocab_size") && !has("vocab_size")) {
                    forModel.add("padded_vocab_size (or vocab_size)");
                }
                if (has("num_experts") && !has("moe_router_topk")) {
                    forModel.add("moe_router_topk");
                }
            }
            if (!missing.isEmpty() || !forModel.isEmpty()) {
                List<String> said = new ArrayList<>();
                if (!forModel.isEmpty()) {
                    said.add(String.join(", ", forModel) + " (the model's sizes: give its config.json with "
                            + "--transformer)");
                }
                if (!missing.isEmpty()) {
                    said.add(String.join(", ", missing) + " (the job's settings, which Megatron-LM prints in its "
                            + "argument block and NeMo and Megatron-Bridge in their configuration: without them, "
                            + "write the run's row of a runs table by hand, docs/formats.md)");
                }
                throw InvalidInputException.inSource(source, which + "the log lacks " + String.join("; and ", said));
            }
            if (model != null) {
                compare(which, model, transformer);
            }
            Job job = job(which);
            Map<String, String> arguments = new LinkedHashMap<>();
            args.forEach((key, v) -> arguments.put(key, v.text()));
            Optional<String> config = model == null ? Optional.of(config(which, job)) : Optional.empty();
            if (consumedOff > consumedChecked / 2 && consumedOff > 0) {
                // the lines' own counts disagree with their batch: one of the two is not the run's
                LOG.warn("{}:{}: {}the consumed samples of {} of {} iteration lines grow by other than their "
                        + "iterations times their global batch (first: {}): the batch the lines say, or their "
                        + "numbering, is not the run's (the time is taken as the job's global batch's)", source,
                        consumedFirstOff, which, consumedOff, consumedChecked, consumedSeen);
            }
            // (a Megatron line times the mean over its interval; a NeMo step line its own step, however numbered)
            int every = megatronLine > 0 ? loggedEvery() : 0;
            String interval = arguments.getOrDefault("log_interval", "").trim();
            if (megatronLine > 0 && every > 0 && interval.matches("[0-9]{1,9}") && Integer.parseInt(interval) > 0
                    && Integer.parseInt(interval) != every) {
                // the arguments say one interval, the lines' numbers another: the lines are what was timed
                LOG.warn("{}:{}: {}log_interval {} in the arguments, but the iteration lines are numbered every {} "
                        + "iteration{}: each line is taken as the mean of {}", source, megatronLine, which, interval,
                        every, every == 1 ? "" : "s", every == 1 ? "one iteration (its own time)" : every
                                + " iterations");
            }
            return new Run(Path.of(source), index, count, line, arguments, job, median, k, drop,
                    Optional.ofNullable(device), config, every);
        }

        private Integer devicesTimesNodes() {
            try {
                Integer d = positive("devices");
                Integer nodes = positive("num_nodes");
                if (d != null && nodes != null && (long) d * nodes <= Integer.MAX_VALUE) {
                    return d * nodes;
                }
            } catch (InvalidInputException e) {
                // devices: auto, -1 ...: not a count
            }
            return null;
        }

        private void compare(String which, TransformerSpec model, Path transformer) {
            List<String> diffs = new ArrayList<>();
            Integer hidden = positive("hidden_size");
            if (hidden != null && hidden != model.hidden()) {
                diffs.add(diff("hidden_size", hidden, model.hidden(), "hidden_size"));
            }
            Integer layers = positive("num_layers");
            if (layers != null && layers != model.layers()) {
                diffs.add(diff("num_layers", layers, model.layers(), "num_hidden_layers"));
            }
            Integer heads = positive("num_attention_heads");
            if (heads != null && heads != model.heads()) {
                diffs.add(diff("num_attention_heads", heads, model.heads(), "num_attention_heads"));
            }
            Integer groups = queryGroups(heads == null ? (int) model.heads() : heads);
            if (groups != null && groups != model.kvHeads()) {
                diffs.add(diff("num_query_groups", groups, model.kvHeads(), "num_key_value_heads"));
            }
            Integer kvChannels = positive("kv_channels");
            if (kvChannels != null && model.mla().isEmpty() && kvChannels != model.headDim()) {
                // a head's size: every attention product's width and the projections' (Megatron's kv_channels)
                diffs.add(diff("kv_channels", kvChannels, model.headDim(), "head_dim"));
            }
            if (has("normalization")) {
                boolean rms = text("normalization").toLowerCase(Locale.ROOT).replace("_", "").equals("rmsnorm");
                if (rms != (model.norm() == TransformerSpec.Norm.RMS_NORM)) {
                    diffs.add("normalization is " + clip(text("normalization")) + " in the log, "
                            + (model.norm() == TransformerSpec.Norm.RMS_NORM ? "RMSNorm" : "LayerNorm")
                            + " in the configuration");
                }
            }
            Integer experts = positive("num_experts");
            if (experts != null && (model.moe().isEmpty() || experts != model.moe().get().experts())) {
                diffs.add("num_experts is " + experts + " in the log, " + model.moe().map(m -> m.experts() + "")
                        .orElse("none (a dense model)") + " in the configuration");
            } else if (experts == null && args.containsKey("num_experts") && model.moe().isPresent()) {
                // the log says None: a dense model
                diffs.add("num_experts is none (a dense model) in the log, " + model.moe().get().experts()
                        + " in the configuration");
            }
            Integer topK = positive("moe_router_topk");
            if (topK != null && model.moe().isPresent() && topK != model.moe().get().topK()) {
                // the experts a token runs through: the experts' work and their all-to-all scale with it
                diffs.add(diff("moe_router_topk", topK, model.moe().get().topK(), "num_experts_per_tok"));
            }
            Integer ffn = positive("ffn_hidden_size");
            if (ffn != null && model.moe().isEmpty() && ffn != model.ffn()) {
                diffs.add(diff("ffn_hidden_size", ffn, model.ffn(), "intermediate_size"));
            }
            Integer moeFfn = positive("moe_ffn_hidden_size");
            if (moeFfn != null && model.moe().isPresent() && moeFfn != model.moe().get().expertFfn()) {
                diffs.add(diff("moe_ffn_hidden_size", moeFfn, model.moe().get().expertFfn(),
                        "moe_intermediate_size"));
            }
            if (activationLogged() && gatedLogged() != model.ffnKind().gated()) {
                diffs.add("the feed-forward is " + (gatedLogged() ? "gated" : "not gated") + " in the log, "
                        + (model.ffnKind().gated() ? "gated" : "not gated") + " in the configuration ("
                        + model.ffnKind().name().toLowerCase(Locale.ROOT) + ")");
            }
            if (has("untie_embeddings_and_output_weights") || has("share_embeddings_and_output_weights")) {
                boolean untied = flag("untie_embeddings_and_output_weights", false)
                        || !flag("share_embeddings_and_output_weights", true);
                if (untied == model.tiedEmbeddings()) {
                    diffs.add("the output layer is " + (untied ? "its own" : "the embedding's") + " in the log, "
                            + (untied ? "tied to the embedding" : "its own") + " in the configuration "
                            + "(tie_word_embeddings)");
                }
            }
            Optional<Boolean> fused = fusedAttention();
            if (fused.isPresent() && fused.get() != model.fusedAttention()) {
                diffs.add("the attention core ran " + (fused.get() ? "fused" : "unfused") + " (" + attentionArguments()
                        + ") in the log, " + (model.fusedAttention() ? "fused" : "unfused") + " in the configuration "
                        + "(give it \"_attn_implementation\": \"" + (fused.get() ? "te" : "eager") + "\")");
            }
            if (slidingWindow() && model.blocks().stream().noneMatch(b -> b.window() > 0)) {
                // (a configuration with windowed layers is taken as stating them; their sizes are its own)
                diffs.add("window_size is " + clip(text("window_size")) + " in the log (sliding-window attention), "
                        + "none in the configuration (full attention in every layer)");
            }
            Integer padded = positive("padded_vocab_size");
            if (padded != null) {
                // Megatron pads the tokenizer's vocabulary to a multiple of its make-vocab-size-divisible-by x tensor;
                // a configuration's vocab_size is the tokenizer's, padded its own way (Qwen's 151,936 for a padded
                // 151,680): the two lie within a tenth of each other, another model's do not (32,000 for 128,256)
                long vocab = model.vocab();
                if (Math.abs(padded - vocab) > VOCAB_SPREAD * Math.max(padded, vocab)) {
                    diffs.add("padded_vocab_size is " + padded + " in the log, vocab_size " + vocab + " in the "
                            + "configuration (both the tokenizer's vocabulary, padded: within a tenth of each other "
                            + "for one model)");
                }
            }
            if (!diffs.isEmpty()) {
                throw InvalidInputException.inSource(source, which + "a log with a different model than the one "
                        + "given is refused: " + String.join("; ", diffs) + " (" + (transformer == null
                                ? "the model given" : transformer) + ")");
            }
        }

        /**
         * Whether the arguments state a sliding window: a {@code window_size} with a side of a positive size (a
         * window of −1 on both sides is Megatron's unlimited one, full attention).
         */
        private boolean slidingWindow() {
            return has("window_size") && POSITIVE_SIZE.matcher(text("window_size")).find();
        }

        private static final Pattern POSITIVE_SIZE = Pattern.compile("(?<![-\\d])[1-9]\\d*");

        /** How far a configuration's vocabulary may lie from the logged padded one, as a fraction of the larger. */
        static final double VOCAB_SPREAD = 0.1;

        private static String diff(String key, long logged, long config, String configKey) {
            return key + " is " + logged + " in the log, " + config + " in the configuration (" + configKey + ")";
        }

        /** The key-value heads the log says, or null when it says nothing of grouped queries. */
        private Integer queryGroups(int heads) {
            boolean gqaLogged = has("group_query_attention");
            boolean gqa = flag("group_query_attention", true);
            if (!gqaLogged && !has("num_query_groups")) {
                return null;
            }
            if (!gqa) {
                return heads;
            }
            Integer g = positive("num_query_groups");
            return g == null ? heads : g;
        }

        private Job job(String which) {
            int tp = positive("tensor_model_parallel_size", 1);
            int pp = positive("pipeline_model_parallel_size", 1);
            int cp = positive("context_parallel_size", 1);
            long modelRanks = (long) tp * pp * cp;
            int seq = positive(has("sequence_length") ? "sequence_length" : "seq_length");
            if (has("sequence_length") && has("seq_length") && positive("seq_length") != seq) {
                // the data loader feeds the dataset's length; the model's own differs (a shorter one pads or packs)
                LOG.warn("{}:{}: {}the dataset's sequence_length {} is the run's sequence, not the model's seq_length "
                        + "{}", source, args.get("sequence_length").line(), which, seq, positive("seq_length"));
            }
            int mbs = positive("micro_batch_size");
            int gbs = positive("global_batch_size");
            Integer world = positive("world_size");
            Integer trainer = devicesTimesNodes();
            if (world == null) {
                world = trainer;
            } else if (trainer != null && !trainer.equals(world)) {
                throw bad("world_size", which + "world_size " + world + " is not devices x num_nodes ("
                        + positive("devices") + " x " + positive("num_nodes") + " = " + trainer + ")");
            }
            Integer dpLogged = positive("data_parallel_size");
            Integer micro = positive("num_micro_batches");
            int dp;
            if (dpLogged != null) {
                dp = dpLogged;
                if (world != null && (long) dp * modelRanks != world) {
                    throw bad("data_parallel_size", which + "data_parallel_size " + dp + " x tensor " + tp
                            + " x pipeline " + pp + " x context " + cp + " is not world_size " + world);
                }
            } else if (world != null) {
                int w = world;
                dp = Parallelism.replicas(w, tp, pp, cp).orElseThrow(() -> bad("world_size", which + "world_size " + w
                        + " is not a multiple of tensor " + tp + " x pipeline " + pp + " x context " + cp + " ("
                        + modelRanks + ")"));
            } else {
                long per = (long) mbs * micro;
                if (gbs % per != 0) {
                    throw bad("global_batch_size", which + "global_batch_size " + gbs + " is not a multiple of "
                            + "micro_batch_size " + mbs + " x micro-batches " + micro);
                }
                dp = (int) (gbs / per);
            }
            long perReplica = (long) mbs * dp;
            if (gbs % perReplica != 0) {
                throw bad("global_batch_size", which + "global_batch_size " + gbs + " is not a multiple of "
                        + "micro_batch_size " + mbs + " x data-parallel size " + dp);
            }
            int microBatches = (int) (gbs / perReplica);
            if (micro != null && micro != microBatches) {
                throw bad("num_micro_batches", which + "the log sets " + micro + " micro-batches, but "
                        + "global_batch_size " + gbs + " / (micro_batch_size " + mbs + " x data-parallel " + dp
                        + ") is " + microBatches);
            }
            int virtual = 1;
            if (has("virtual_pipeline_model_parallel_size")) {
                virtual = positive("virtual_pipeline_model_parallel_size");
            }
            if (has("num_layers_per_virtual_pipeline_stage") && has("num_layers")) {
                // Megatron derives the chunks from the layers a chunk holds (counting the embedding and the loss as
                // layers where the split accounts for them); both logged, the size is the logged one where they agree
                int per = positive("num_layers_per_virtual_pipeline_stage");
                int layers = positive("num_layers");
                long counted = layers + (flag("account_for_embedding_in_pipeline_split", false) ? 1 : 0)
                        + (flag("account_for_loss_in_pipeline_split", false) ? 1 : 0);
                boolean whole = counted % ((long) pp * per) == 0;
                int derived = (int) (counted / ((long) pp * per));
                if (!has("virtual_pipeline_model_parallel_size")) {
                    if (!whole) {
                        throw bad("num_layers_per_virtual_pipeline_stage", which + "num_layers " + counted
                                + (counted != layers ? " (the embedding or loss counted)" : "") + " is not a "
                                + "multiple of pipeline " + pp + " x num_layers_per_virtual_pipeline_stage " + per);
                    }
                    virtual = derived;
                } else if (whole && derived != virtual) {
                    throw bad("num_layers_per_virtual_pipeline_stage", which + "num_layers_per_virtual_pipeline_stage "
                            + per + " makes " + derived + " chunks a stage (num_layers " + counted + " over pipeline "
                            + pp + "), but virtual_pipeline_model_parallel_size is " + virtual);
                }
            }
            boolean moe = has("num_experts");
            int ep = moe ? positive("expert_model_parallel_size", 1) : 1;
            // (None: the tensor-parallel size, Megatron core's own default whatever the expert parallelism; the
            // command line's, Parallelism.defaultExpertTensor, is 1 with expert parallelism, as the recipes set it)
            int etp = moe ? positive("expert_tensor_parallel_size", tp) : 1;
            int zero = 0;
            if (flag("use_torch_fsdp2", false)) {
                zero = 3;
            } else if (flag("use_megatron_fsdp", false) || flag("use_custom_fsdp", false)) {
                String s = text("data_parallel_sharding_strategy");
                zero = s == null ? 3 : switch (s) {
                    case "no_shard" -> flag("use_distributed_optimizer", false) ? 1 : 0;
                    case "optim" -> 1;
                    case "optim_grads" -> 2;
                    case "optim_grads_params" -> 3;
                    default -> throw bad("data_parallel_sharding_strategy", which + "data_parallel_sharding_strategy '"
                            + clip(s) + "' is not known (no_shard, optim, optim_grads, optim_grads_params)");
                };
            } else if (flag("use_distributed_optimizer", false)) {
                zero = 1;
            }
            if (flag("deepspeed", false) && has("zero_stage")) {
                // Megatron-DeepSpeed: DeepSpeed's ZeRO shards what its stage says, whatever Megatron's own flags
                String s = text("zero_stage");
                zero = switch (s) {
                    case "0", "1", "2", "3" -> Integer.parseInt(s);
                    default -> throw bad("zero_stage", which + "zero_stage '" + clip(s) + "' is not a ZeRO stage "
                            + "(0, 1, 2 or 3)");
                };
            }
            Precision precision = precision(which);
            Recompute recompute;
            String granularity = text("recompute_granularity");
            if (granularity == null) {
                recompute = flag("recompute_activations", false) ? Recompute.SELECTIVE : Recompute.NONE;
            } else {
                recompute = switch (granularity.toLowerCase(Locale.ROOT)) {
                    case "selective" -> Recompute.SELECTIVE;
                    case "full" -> Recompute.FULL;
                    default -> throw bad("recompute_granularity", which + "recompute_granularity '"
                            + clip(granularity) + "' is not known (None, selective, full)");
                };
            }
            java.util.Set<org.scaledl.workload.RecomputeModule> modules = org.scaledl.workload.RecomputeModule.DEFAULT;
            String listed = text("recompute_modules");
            if (recompute == Recompute.SELECTIVE && listed != null && !listed.equalsIgnoreCase("None")) {
                String names = listed.replaceAll("[\\[\\]'\",\\s]+", " ").trim();
                if (names.isEmpty()) {
                    // Megatron core's selective recomputation of no module keeps everything
                    recompute = Recompute.NONE;
                } else {
                    try {
                        modules = org.scaledl.workload.RecomputeModule.parseList(names);
                    } catch (InvalidInputException e) {
                        throw bad("recompute_modules", which + "recompute_modules: " + e.detail());
                    }
                }
            }
            boolean sp = flag("sequence_parallel", false) && tp > 1;
            // the gradients' reduction: Megatron's overlap_grad_reduce (NeMo 1.x's overlap_grad_sync), else the
            // DDP implementation of older Megatron-LM (local: after the backward pass; torch: PyTorch DDP's buckets);
            // PyTorch FSDP2 overlaps its own; nothing logged: overlapped
            boolean afterBackward = false;
            boolean fsdp2 = flag("use_torch_fsdp2", false);
            if (!fsdp2 && has("overlap_grad_reduce")) {
                afterBackward = !flag("overlap_grad_reduce", false);
            } else if (!fsdp2 && has("DDP_impl")) {
                String impl = text("DDP_impl");
                afterBackward = switch (impl.toLowerCase(Locale.ROOT)) {
                    case "local" -> true;
                    case "torch" -> false;
                    default -> throw bad("DDP_impl", which + "DDP_impl '" + clip(impl) + "' is not known (local, "
                            + "torch)");
                };
            }
            // the gradient buffers' type: Megatron core's grad_reduce_in_fp32 (Megatron-LM's
            // accumulate_allreduce_grads_in_fp32), else NeMo 1.x's grad_sync_dtype; FP32 training has no other
            Optional<Boolean> sixteenBit = Optional.empty();
            if (precision.isMixed() && has("grad_reduce_in_fp32")) {
                sixteenBit = Optional.of(!flag("grad_reduce_in_fp32", false));
            } else if (precision.isMixed() && has("grad_sync_dtype")) {
                String dtype = text("grad_sync_dtype");
                String d = dtype.toLowerCase(Locale.ROOT).replace("torch.", "");
                sixteenBit = Optional.of(switch (d) {
                    case "bf16", "fp16", "bfloat16", "float16", "half" -> true;
                    case "fp32", "float32", "float" -> false;
                    default -> throw bad("grad_sync_dtype", which + "grad_sync_dtype '" + clip(dtype)
                            + "' is not known (bf16, fp16, fp32)");
                });
            }
            try {
                new Parallelism(dp, tp, pp, microBatches, sp, zero, virtual, cp, ep, etp);
            } catch (IllegalArgumentException e) {
                throw InvalidInputException.inSource(source, which + "the logged layout is not one to predict: "
                        + e.getMessage());
            }
            // Megatron core's overlap of the experts' dispatch and combine with another micro-batch's compute
            boolean a2aOverlap = ep > 1 && flag("overlap_moe_expert_parallel_comm", false);
            if (a2aOverlap && recompute == Recompute.FULL) {
                throw bad("overlap_moe_expert_parallel_comm", which + "overlap_moe_expert_parallel_comm True with "
                        + "full recomputation, which Megatron core refuses");
            }
            if (a2aOverlap && modules.contains(org.scaledl.workload.RecomputeModule.MOE)) {
                throw bad("overlap_moe_expert_parallel_comm", which + "overlap_moe_expert_parallel_comm True with "
                        + "the whole mixture of experts recomputed (recompute_modules moe), which Megatron core "
                        + "refuses");
            }
            org.scaledl.workload.MoeDispatcher dispatcher = ep > 1 ? dispatcher(which)
                    : org.scaledl.workload.MoeDispatcher.ALLTOALL;
            if (a2aOverlap && dispatcher == org.scaledl.workload.MoeDispatcher.ALLGATHER) {
                throw bad("overlap_moe_expert_parallel_comm", which + "overlap_moe_expert_parallel_comm True with "
                        + "the allgather token dispatcher, which Megatron core refuses");
            }
            unread(which, virtual);
            return new Job(seq, mbs, microBatches, dp, tp, pp, cp, virtual, uneven(which, pp), ep, etp, zero,
                    precision, recompute, recomputeLayers(which, recompute), modules, sp,
                    afterBackward ? org.scaledl.workload.GradReduce.AFTER_BACKWARD : gather(which, zero), sixteenBit,
                    dispatcher, a2aOverlap, cudaGraphs(which), fp8ParamGather(which, precision, zero), gpusPerNode());
        }

        /**
         * Whether a pipeline's layers are split unevenly: Megatron core's {@code decoder_first_pipeline_num_layers} or
         * {@code decoder_last_pipeline_num_layers} stated, or the embedding or the loss counted as a layer of the
         * split. The stated counts themselves are not read (said): the row's {@code uneven_pipeline} balances the
         * layers as evenly as they go.
         */
        private boolean uneven(String which, int pp) {
            if (pp < 2) {
                return false;
            }
            for (String k : List.of("decoder_first_pipeline_num_layers", "decoder_last_pipeline_num_layers")) {
                if (has(k) && positive(k) != null) {
                    LOG.warn("{}:{}: {}the pipeline's stated split ({} {}) is not read: the run is predicted with its "
                            + "layers split as evenly as they go (uneven_pipeline true)", source, args.get(k).line(),
                            which, k, clip(text(k)));
                    return true;
                }
            }
            return flag("account_for_embedding_in_pipeline_split", false)
                    || flag("account_for_loss_in_pipeline_split", false);
        }

        /**
         * With full recomputation, the layers of each model chunk Megatron's block method recomputes
         * ({@code recompute_num_layers}); 0, every layer, with the uniform method (which checkpoints groups of that many
         * layers and recomputes them all) or none logged.
         */
        private int recomputeLayers(String which, Recompute recompute) {
            if (recompute != Recompute.FULL || !has("recompute_method")) {
                return 0;
            }
            String method = unquote(text("recompute_method"));
            return switch (method.toLowerCase(Locale.ROOT)) {
                case "uniform" -> 0;
                case "block" -> {
                    Integer n = positive("recompute_num_layers");
                    if (n == null) {
                        throw bad("recompute_method", which + "recompute_method block without recompute_num_layers: "
                                + "how many layers of each model chunk it recomputes is not said");
                    }
                    yield n;
                }
                default -> throw bad("recompute_method", which + "recompute_method '" + clip(method) + "' is not "
                        + "known (uniform, block)");
            };
        }

        /**
         * Says what a run's arguments state that its job does not hold: activation offloading and packed sequences
         * (a runs table's {@code offload_layers} and {@code document_tokens} columns say them; the row written leaves
         * both to their defaults, so its prediction is of a job without them), and an interleaved schedule's sends
         * not overlapped ({@code overlap_p2p_comm} False with {@code virtual} chunks a stage: no column says it, the
         * prediction assumes them overlapped and its note says what exposed ones take).
         */
        private void unread(String which, int virtual) {
            if (virtual > 1 && has("overlap_p2p_comm") && !flag("overlap_p2p_comm", true)) {
                LOG.warn("{}:{}: {}the interleaved schedule's sends are not overlapped (overlap_p2p_comm False): the "
                        + "run is predicted with them overlapped, Megatron core's default (a prediction's note says "
                        + "what exposed ones take where it matters)", source, args.get("overlap_p2p_comm").line(),
                        which);
            }
            if (flag("cpu_offloading", false)) {
                Value v = args.get("cpu_offloading");
                boolean activations = flag("cpu_offloading_activations", true);
                LOG.warn("{}:{}: {}{} offloading (cpu_offloading{}) is not read from a log: the run is predicted "
                        + "without it{}", source, v.line(), which, activations ? "activation" : "weight",
                        has("cpu_offloading_num_layers") ? ", " + clip(text("cpu_offloading_num_layers")) + " layers"
                                : "", activations ? "; give the runs table's offload_layers" : " (a table has no "
                                + "column for offloaded weights)");
            }
            if (has("lora_adapters")) {
                String rank = has("lora_dim") ? clip(text("lora_dim")) : "";
                LOG.warn("{}:{}: {}LoRA fine-tuning{} is not read from a log: the run is predicted as full training "
                        + "(every weight's gradients and optimizer states); give the runs table's lora_rank{}", source,
                        args.get("lora_adapters").line(), which, rank.isEmpty() ? "" : " (rank " + rank + ")",
                        rank.isEmpty() ? " (the adapters' rank)" : " " + rank);
            }
            // (NeMo's default specs say -1: no packing)
            if (has("packed_sequence_size") && text("packed_sequence_size").matches("[1-9][0-9]*")) {
                LOG.warn("{}:{}: {}packed sequences (packed_sequence_size {}) are not read from a log: the run is "
                        + "predicted as one document a sequence; give the runs table's document_tokens (the documents' "
                        + "mean length)", source, args.get("packed_sequence_size").line(), which,
                        clip(text("packed_sequence_size")));
            }
        }

        /**
         * The distributed optimizer's gather of the updated weights, the gradients' reduction overlapped: after the
         * optimizer step, exposed, where the log has Megatron core's {@code overlap_param_gather} False (Megatron-LM's
         * default) with ZeRO 1 or 2 (not Megatron FSDP's); overlapped otherwise, and where not logged, as the recipes
         * run it.
         */
        private org.scaledl.workload.GradReduce gather(String which, int zero) {
            boolean distributedOptimizer = (zero == 1 || zero == 2) && !flag("use_megatron_fsdp", false)
                    && !flag("use_custom_fsdp", false) && !flag("deepspeed", false);
            boolean after = distributedOptimizer && has("overlap_param_gather") && !flag("overlap_param_gather", false);
            if (after && !has("overlap_grad_reduce") && !has("DDP_impl")) {
                // Megatron runs overlap_param_gather only with overlap_grad_reduce: half the evidence, said
                LOG.warn("{}:{}: {}overlap_param_gather False is logged without overlap_grad_reduce: the gradients' "
                        + "reduction is taken as overlapped and the weights' gather after the optimizer step "
                        + "(gather-after-step; a runs table's grad_reduce after-backward where the reduction waits "
                        + "for the backward pass too)", source, args.get("overlap_param_gather").line(), which);
            }
            return after ? org.scaledl.workload.GradReduce.GATHER_AFTER_STEP
                    : org.scaledl.workload.GradReduce.OVERLAPPED;
        }

        /**
         * FP8 weights as the parameters: Megatron's {@code fp8_param_gather} (NeMo's {@code fp8_params}) True, where
         * the job can run them ({@link org.scaledl.workload.Workload#fp8ParamGatherRefusal}); where it cannot as the
         * predictor models it (FSDP's, a job without the distributed optimizer), said and left out.
         */
        private boolean fp8ParamGather(String which, Precision precision, int zero) {
            if (has("fp8_param_gather") && has("fp8_params") && flag("fp8_param_gather", false)
                    != flag("fp8_params", false)) {
                // NeMo's precision plugin and the data-parallel configuration say the weights' format two ways
                throw bad("fp8_param_gather", which + "fp8_param_gather " + text("fp8_param_gather") + " and "
                        + "fp8_params " + text("fp8_params") + " disagree: the log says two ways whether the weights "
                        + "are kept in FP8");
            }
            for (String k : List.of("fp8_param_gather", "fp8_params")) {
                if (flag(k, false)) {
                    Optional<String> why = org.scaledl.workload.Workload.fp8ParamGatherRefusal(
                            org.scaledl.workload.Phase.TRAIN, precision, zero, 0);
                    if (why.isEmpty()) {
                        return true;
                    }
                    LOG.warn("{}:{}: {}{} True is left out of the row: {}", source, args.get(k).line(), which, k,
                            why.get());
                    return false;
                }
            }
            return false;
        }

        /** NeMo's GPUs per node ({@link Job#gpusPerNode()}): its trainer's {@code devices} beside {@code num_nodes}. */
        private Optional<Integer> gpusPerNode() {
            if (!has("num_nodes")) {
                return Optional.empty();
            }
            try {
                Integer d = positive("devices");
                return d != null && d <= org.scaledl.workload.Topology.MAX_GPUS_PER_NODE ? Optional.of(d)
                        : Optional.empty();
            } catch (InvalidInputException e) {
                // devices: auto, -1 ...: not a count
                return Optional.empty();
            }
        }

        /**
         * The CUDA graphs: {@code cuda_graph_impl} none; local: of the iteration where {@code cuda_graph_scope} names
         * full_iteration, else of layers; transformer_engine: of layers (its graphs capture modules of a layer);
         * else older Megatron core's {@code enable_cuda_graph} True as local and {@code external_cuda_graph} True as
         * transformer_engine; none when not logged.
         */
        private CudaGraphs cudaGraphs(String which) {
            String impl = text("cuda_graph_impl");
            String i;
            if (args.containsKey("cuda_graph_impl") && impl == null) {
                i = "none";   // logged as None
            } else if (impl != null) {
                i = impl.trim().toLowerCase(Locale.ROOT).replace("'", "").replace("\"", "");
            } else {
                i = flag("enable_cuda_graph", false) ? "local"
                        : flag("external_cuda_graph", false) ? "transformer_engine" : "none";
            }
            return switch (i) {
                case "none" -> CudaGraphs.NONE;
                case "transformer_engine" -> CudaGraphs.LAYERS;
                case "local" -> {
                    String scope = text("cuda_graph_scope");
                    yield scope != null && scope.toLowerCase(Locale.ROOT).contains("full_iteration")
                            ? CudaGraphs.ITERATION : CudaGraphs.LAYERS;
                }
                default -> throw bad("cuda_graph_impl", which + "cuda_graph_impl '" + clip(impl)
                        + "' is not known (none, local, transformer_engine)");
            };
        }

        /**
         * Megatron core's token dispatcher: {@code moe_token_dispatcher_type} (alltoall, allgather, flex with
         * {@code moe_flex_dispatcher_backend}, DeepEP by default), the deprecated {@code moe_enable_deepep}; none
         * logged: all-to-all, as the recipes with expert parallelism set.
         */
        private org.scaledl.workload.MoeDispatcher dispatcher(String which) {
            String type = unquote(text("moe_token_dispatcher_type"));
            if (flag("moe_enable_deepep", false)) {
                return org.scaledl.workload.MoeDispatcher.DEEPEP;
            }
            if (type == null || type.equalsIgnoreCase("None")) {
                return org.scaledl.workload.MoeDispatcher.ALLTOALL;
            }
            String backend = unquote(text("moe_flex_dispatcher_backend"));
            boolean flexBackend = type.trim().equalsIgnoreCase("flex") && backend != null
                    && !backend.equalsIgnoreCase("None");
            String key = flexBackend ? "moe_flex_dispatcher_backend" : "moe_token_dispatcher_type";
            try {
                return org.scaledl.workload.MoeDispatcher.parse(flexBackend ? backend : type);
            } catch (InvalidInputException e) {
                throw bad(key, which + key + ": " + e.detail());
            }
        }

        /**
         * Whether a low-precision format argument is on: one of its formats (Megatron's {@code --fp8-format} e4m3 or
         * hybrid, {@code --fp4-format} e2m1, NVFP4's recipe name) or a true flag word (True, 1, yes); a false one
         * (False, 0, no) or not logged (None) is off; anything else is refused, naming the run where the log holds
         * several.
         */
        private boolean switchedOn(String key, String which, String... formats) {
            String v = text(key);
            if (v == null) {
                return false;
            }
            if (java.util.Arrays.asList(formats).contains(v.toLowerCase(Locale.ROOT))) {
                return true;
            }
            return flagWord(v).orElseThrow(() -> bad(key, which + key + " must be "
                    + String.join(", ", formats) + ", True or False, got '" + clip(v) + "'"));
        }

        private Precision precision(String which) {
            String trainer = text("precision");
            String tt = trainer == null ? "" : unquote(trainer).trim().toLowerCase(Locale.ROOT);
            if (tt.equals("16-true") || tt.equals("bf16-true")) {
                // Lightning's 16-bit weights without an FP32 master copy: refused as a table's precision is, by the
                // same reading
                try {
                    Precision.parse(tt);
                } catch (InvalidInputException e) {
                    throw bad("precision", which + e.getMessage());
                }
            }
            Precision stated = trainerPrecision(tt);
            if (stated != null && (flag("bf16", false) || flag("fp16", false))) {
                // the model's flags and the trainer's precision name one 16-bit format where both are logged
                String flagKey = flag("bf16", false) ? "bf16" : "fp16";
                if (flagKey.equals("bf16") ? stated == Precision.FP16 : stated == Precision.BF16) {
                    throw bad("precision", which + "the trainer's precision '" + clip(trainer) + "' (line "
                            + args.get("precision").line() + ") is not the model's " + flagKey + " True (line "
                            + args.get(flagKey).line() + "): a run trains in one 16-bit format");
                }
            }
            if (switchedOn("fp4", which, "e2m1", "nvfp4")) {
                // Megatron core's fp4_recipe: nvfp4 (its default) is the one this library predicts
                String recipe = text("fp4_recipe");
                if (recipe != null && !unquote(recipe).equalsIgnoreCase("nvfp4")) {
                    throw bad("fp4_recipe", which + "fp4_recipe '" + clip(recipe) + "' is not known (nvfp4)");
                }
                return Precision.NVFP4;
            }
            if (switchedOn("fp8", which, "e4m3", "hybrid")) {
                String recipe = text("fp8_recipe");
                String r = recipe == null ? "delayed" : recipe.toLowerCase(Locale.ROOT);
                return switch (r) {
                    case "delayed", "tensorwise" -> Precision.FP8;
                    case "blockwise" -> Precision.FP8_BLOCK;
                    case "mxfp8" -> Precision.MXFP8;
                    default -> throw bad("fp8_recipe", which + "fp8_recipe '" + clip(recipe) + "' is not known "
                            + "(delayed, tensorwise, blockwise, mxfp8)");
                };
            }
            if (flag("bf16", false) && flag("fp16", false)) {
                // Megatron asserts one of the two: which one ran is not for the reader to guess
                throw bad("fp16", "fp16 and bf16 both True: a run trains in one of them (Megatron refuses the pair)");
            }
            if (flag("bf16", false)) {
                return Precision.BF16;
            }
            if (flag("fp16", false)) {
                return Precision.FP16;
            }
            if (trainer != null) {
                if (stated == null) {
                    throw bad("precision", which + "precision '" + clip(trainer) + "' is not known (bf16-mixed, "
                            + "16-mixed, 32, tf32)");
                }
                return stated;
            }
            return Precision.FP32;
        }

        /**
         * A trainer's precision flag (Lightning's, lower case and unquoted): {@code bf16-mixed} BF16, {@code 16},
         * {@code 16-mixed} FP16, {@code 32} FP32, {@code tf32} TF32; null for another.
         */
        private static Precision trainerPrecision(String t) {
            if (t.contains("bf16")) {
                return Precision.BF16;
            }
            if (t.equals("16") || t.startsWith("16-") || t.contains("fp16")) {
                return Precision.FP16;
            }
            if (t.equals("32") || t.startsWith("32-") || t.contains("fp32")) {
                return Precision.FP32;
            }
            return t.equals("tf32") ? Precision.TF32 : null;
        }

        // --- the model ---------------------------------------------------------------------------------------------

        private String config(String which, Job job) {
            int hidden = positive("hidden_size");
            int layers = positive("num_layers");
            int heads = positive("num_attention_heads");
            int ffn = positive("ffn_hidden_size");
            int vocab = has("padded_vocab_size") ? positive("padded_vocab_size") : unpadded(positive("vocab_size"));
            Integer kvHeads = queryGroups(heads);
            int kv = kvHeads == null ? heads : kvHeads;
            Integer kvChannels = positive("kv_channels");
            Integer headDim = kvChannels != null && (hidden % heads != 0 || kvChannels != hidden / heads)
                    ? kvChannels : null;
            int positions = positive("max_position_embeddings", Math.max(job.seq(), positive("seq_length",
                    job.seq())));
            if (flag("multi_latent_attention", false)) {
                throw InvalidInputException.inSource(source, which + "a model with multi-latent attention cannot be "
                        + "written from its arguments: give its config.json (--transformer)");
            }
            if (flag("is_hybrid_model", false)) {
                throw InvalidInputException.inSource(source, which + "a hybrid (Mamba) model cannot be written from "
                        + "its arguments: give its config.json (--transformer)");
            }
            // attention the arguments describe but a written configuration would not hold: a sliding window (GPT-OSS's
            // every other layer, window_attn_skip_freq), learnable softmax offsets (attention sinks); built as full
            // attention it was predicted a quarter faster than the model's own configuration, without a word
            if (slidingWindow()) {
                throw bad("window_size", which + "a model with sliding-window attention (window_size "
                        + clip(text("window_size")) + ") cannot be written from its arguments: give its config.json "
                        + "(--transformer)");
            }
            if (has("softmax_type") && !text("softmax_type").equalsIgnoreCase("vanilla")) {
                throw bad("softmax_type", which + "a model whose attention softmax is " + clip(text("softmax_type"))
                        + " (attention sinks, an off-by-one softmax) cannot be written from its arguments: give its "
                        + "config.json (--transformer)");
            }
            String act = activation();
            // Megatron's LayerNorm and RMSNorm; NeMo 1's layernorm1p (a LayerNorm whose scale is stored minus one) and
            // low_precision_layernorm cost a LayerNorm's
            String norm = has("normalization") ? text("normalization").toLowerCase(Locale.ROOT).replace("_", "")
                    : "layernorm";
            if (!List.of("layernorm", "layernorm1p", "lowprecisionlayernorm", "rmsnorm").contains(norm)) {
                throw bad("normalization", which + "normalization must be LayerNorm or RMSNorm (or NeMo 1's "
                        + "layernorm1p, low_precision_layernorm), got '" + clip(text("normalization")) + "'");
            }
            boolean rms = norm.equals("rmsnorm");
            String pos = has("position_embedding_type") ? text("position_embedding_type").toLowerCase(Locale.ROOT)
                    : "learned_absolute";
            boolean untied = flag("untie_embeddings_and_output_weights", false)
                    || !flag("share_embeddings_and_output_weights", true);
            boolean bias = flag("add_bias_linear", true);
            boolean qkvBias = flag("add_qkv_bias", false);
            boolean qkNorm = flag("qk_layernorm", false);
            Double attnDrop = rate("attention_dropout");
            Double hiddenDrop = rate("hidden_dropout");

            ObjectMapper om = new ObjectMapper();
            ObjectNode c = om.createObjectNode();
            Integer experts = positive("num_experts");
            if (experts != null) {
                if (!act.equals("swiglu")) {
                    throw InvalidInputException.inSource(source, which + "a mixture of experts with " + act
                            + " experts cannot be written from its arguments (SwiGLU experts can): give its "
                            + "config.json (--transformer)");
                }
                int topK = positive("moe_router_topk");
                if (topK > experts) {
                    throw bad("moe_router_topk", which + "moe_router_topk " + topK + " is more than num_experts "
                            + experts);
                }
                int moeFfn = positive("moe_ffn_hidden_size", ffn);
                Integer shared = positive("moe_shared_expert_intermediate_size");
                boolean[] moeLayer = moeLayers(which, layers);
                List<Integer> dense = new ArrayList<>();
                List<Integer> sparse = new ArrayList<>();
                for (int i = 0; i < layers; i++) {
                    (moeLayer[i] ? sparse : dense).add(i);
                }
                if (shared != null) {
                    if (shared != moeFfn) {
                        throw bad("moe_shared_expert_intermediate_size", which + "a shared expert of "
                                + shared + " (the routed experts' " + moeFfn + ") cannot be written from the "
                                + "arguments: give the model's config.json (--transformer)");
                    }
                    c.put("model_type", "llama4_text");
                    common(c, hidden, layers, heads, kv, headDim, vocab, positions, untied, bias);
                    c.put("intermediate_size", moeFfn);
                    c.put("intermediate_size_mlp", ffn);
                    c.put("num_local_experts", experts);
                    c.put("num_experts_per_tok", topK);
                    c.put("interleave_moe_layer_step", 1);
                    ArrayNode ml = c.putArray("moe_layers");
                    sparse.forEach(ml::add);
                    c.putNull("attention_chunk_size");
                } else if (dense.isEmpty() && !qkNorm) {
                    c.put("model_type", "mixtral");
                    common(c, hidden, layers, heads, kv, headDim, vocab, positions, untied, bias);
                    c.put("intermediate_size", moeFfn);
                    c.put("num_local_experts", experts);
                    c.put("num_experts_per_tok", topK);
                    c.putNull("sliding_window");
                } else {
                    c.put("model_type", "qwen3_moe");
                    common(c, hidden, layers, heads, kv, headDim, vocab, positions, untied, bias);
                    if (!c.has("head_dim")) {
                        c.put("head_dim", hidden / heads);
                    }
                    c.put("intermediate_size", ffn);
                    c.put("moe_intermediate_size", moeFfn);
                    c.put("num_experts", experts);
                    c.put("num_experts_per_tok", topK);
                    c.put("decoder_sparse_step", 1);
                    ArrayNode ml = c.putArray("mlp_only_layers");
                    dense.forEach(ml::add);
                    c.put("use_sliding_window", false);
                }
                c.put("hidden_act", "silu");
            } else if (act.equals("swiglu") && rms) {
                c.put("model_type", qkNorm ? "qwen3" : qkvBias && !bias ? "qwen2" : "llama");
                common(c, hidden, layers, heads, kv, headDim, vocab, positions, untied, bias);
                c.put("intermediate_size", ffn);
                c.put("hidden_act", "silu");
                if (c.get("model_type").asText().startsWith("qwen")) {
                    c.put("use_sliding_window", false);
                }
            } else if (act.equals("gelu") && pos.startsWith("learned") && !untied && bias && kv == heads
                    && headDim == null) {
                c.put("model_type", "gpt2");
                c.put("n_embd", hidden);
                c.put("n_head", heads);
                c.put("n_layer", layers);
                c.put("n_inner", ffn);
                c.put("vocab_size", vocab);
                c.put("n_positions", positions);
                c.put("activation_function", "gelu_new");
                c.put("attn_pdrop", attnDrop == null ? 0.1 : attnDrop);
                c.put("resid_pdrop", hiddenDrop == null ? 0.1 : hiddenDrop);
                c.put("embd_pdrop", hiddenDrop == null ? 0.1 : hiddenDrop);
            } else {
                c.put("model_type", "nemotron");
                common(c, hidden, layers, heads, kv, headDim, vocab, positions, untied, bias);
                c.put("intermediate_size", ffn);
                c.put("hidden_act", switch (act) {
                    case "swiglu" -> "silu";
                    case "squared_relu" -> "relu2";
                    default -> "gelu";
                });
            }
            if (!c.get("model_type").asText().equals("gpt2") && attnDrop != null) {
                c.put("attention_dropout", attnDrop);
            }
            // the core as it ran (a written Llama is fused and a GPT-2 unfused unless the log says otherwise)
            fusedAttention().ifPresent(f -> c.put("_attn_implementation", f ? "te" : "eager"));
            c.put("scaledl_from_log", Path.of(source).getFileName() == null ? source
                    : Path.of(source).getFileName().toString());
            String json;
            try {
                json = om.writerWithDefaultPrettyPrinter().writeValueAsString(c) + "\n";
            } catch (JsonProcessingException e) {
                throw new IllegalStateException(e);
            }
            try {
                HuggingFaceConfig.parse(json.getBytes(StandardCharsets.UTF_8), "config.json", "log");
            } catch (InvalidInputException e) {
                throw InvalidInputException.inSource(source, which + "the model its arguments describe is not one "
                        + "to predict: " + e.detail());
            }
            return json;
        }

        private static void common(ObjectNode c, int hidden, int layers, int heads, int kv, Integer headDim,
                int vocab, int positions, boolean untied, boolean bias) {
            c.put("hidden_size", hidden);
            c.put("num_hidden_layers", layers);
            c.put("num_attention_heads", heads);
            c.put("num_key_value_heads", kv);
            if (headDim != null) {
                c.put("head_dim", headDim);
            }
            c.put("vocab_size", vocab);
            c.put("max_position_embeddings", positions);
            c.put("tie_word_embeddings", !untied);
            c.put("attention_bias", bias);
            c.put("mlp_bias", bias);
        }

        /**
         * The logged {@code vocab_size} where the log lacks the padded size, said where Megatron-LM would pad it (to a
         * multiple of {@code make_vocab_size_divisible_by}, 128 unless logged, times the tensor-parallel degree): the
         * frameworks pad differently (NeMo 2 and Megatron-Bridge not at all unless told), so it is taken as logged.
         */
        private int unpadded(int vocab) {
            long multiple = (long) positive("make_vocab_size_divisible_by", 128)
                    * positive("tensor_model_parallel_size", 1);
            if (vocab % multiple != 0) {
                LOG.warn("{}: vocab_size {} is taken as logged, unpadded (the log has no padded vocabulary line; "
                        + "Megatron-LM pads it to a multiple of {}, make_vocab_size_divisible_by x tensor parallelism: "
                        + "give the model's config.json with --transformer to state it)", source, vocab, multiple);
            }
            return vocab;
        }

        /** Whether the arguments state the feed-forward's activation (Megatron prints swiglu whether set or not). */
        private boolean activationLogged() {
            return has("swiglu") || has("squared_relu") || has("activation") || has("activation_func")
                    || has("gated_linear_unit") || has("quick_geglu");
        }

        /**
         * Whether the arguments say a gated feed-forward, whatever its activation: SwiGLU, Megatron core's
         * {@code gated_linear_unit} (with GELU too: Gemma's, GPT-OSS's), Megatron-LM's {@code quick_geglu}, NeMo's
         * {@code geglu} and {@code swiglu} names.
         */
        private boolean gatedLogged() {
            String a = has("activation") ? text("activation").toLowerCase(Locale.ROOT) : "";
            return activation().equals("swiglu") || flag("gated_linear_unit", false) || flag("quick_geglu", false)
                    || a.contains("glu");
        }

        /**
         * Whether the attention core ran fused, as the arguments say: Megatron's {@code attention_backend} unfused or
         * local runs it unfused; its {@code transformer_impl local} runs Megatron's own core, fused only with the
         * legacy {@code use_flash_attn}; {@code transformer_engine} runs Transformer Engine's fused kernels; an older
         * log with only {@code use_flash_attn} says it by that. Empty where the log says none of these.
         */
        private Optional<Boolean> fusedAttention() {
            String backend = has("attention_backend") ? text("attention_backend").toLowerCase(Locale.ROOT) : "";
            if (backend.endsWith("unfused") || backend.endsWith("local")) {
                return Optional.of(false);
            }
            String impl = has("transformer_impl") ? text("transformer_impl").toLowerCase(Locale.ROOT) : "";
            if (impl.equals("local")) {
                return Optional.of(flag("use_flash_attn", false));
            }
            if (impl.equals("transformer_engine") || backend.endsWith("flash") || backend.endsWith("fused")) {
                return Optional.of(true);
            }
            return has("use_flash_attn") ? Optional.of(flag("use_flash_attn", false)) : Optional.empty();
        }

        /** The arguments {@link #fusedAttention()} read, as the log states them. */
        private String attentionArguments() {
            List<String> said = new ArrayList<>();
            for (String key : List.of("attention_backend", "transformer_impl", "use_flash_attn")) {
                if (has(key)) {
                    said.add(key + " " + clip(text(key)));
                }
            }
            return String.join(", ", said);
        }

        /** swiglu, squared_relu or gelu. */
        private String activation() {
            if (flag("swiglu", false)) {
                return "swiglu";
            }
            if (flag("squared_relu", false)) {
                return "squared_relu";
            }
            String a = text("activation");
            if (a != null) {
                String t = a.toLowerCase(Locale.ROOT);
                if (t.contains("swiglu") || t.contains("silu")) {
                    return "swiglu";
                }
                if (t.contains("squared") || t.contains("relu2")) {
                    return "squared_relu";
                }
            }
            String f = text("activation_func");
            String fn = f == null ? "" : f.toLowerCase(Locale.ROOT);
            if (flag("gated_linear_unit", false) && (fn.isEmpty() || fn.contains("silu") || fn.contains("swish"))) {
                return "swiglu";
            }
            if (fn.contains("squared_relu") || fn.contains("relu2")) {
                return "squared_relu";
            }
            return "gelu";
        }

        /** Which layers have experts, from {@code moe_layer_freq}. */
        private boolean[] moeLayers(String which, int layers) {
            boolean[] out = new boolean[layers];
            String f = text("moe_layer_freq");
            if (f == null) {
                Arrays.fill(out, true);
                return out;
            }
            String t = f.replace(" ", "");
            if (t.matches("\\d{1,10}")) {
                int every = positive("moe_layer_freq");
                for (int i = 0; i < layers; i++) {
                    out[i] = i % every == 0;
                }
                return out;
            }
            List<Boolean> pattern = new ArrayList<>();
            if (t.matches("\\[[01](,[01])*\\]")) {
                for (String x : t.substring(1, t.length() - 1).split(",")) {
                    pattern.add(x.equals("1"));
                }
            } else if (t.matches("\\(?\\[[01]\\]\\*\\d{1,9}(\\+\\[[01]\\]\\*\\d{1,9})*\\)?")) {
                Matcher m = FREQ_EXPR.matcher(t);
                while (m.find()) {
                    long count = Long.parseLong(m.group(2));
                    if (pattern.size() + count > layers) {
                        pattern.add(false);
                        break;
                    }
                    for (long i = 0; i < count; i++) {
                        pattern.add(m.group(1).equals("1"));
                    }
                }
            } else {
                throw bad("moe_layer_freq", which + "moe_layer_freq '" + clip(f) + "' is not an integer, a list of "
                        + "0/1 per layer or ([0]*N+[1]*M)");
            }
            if (pattern.size() != layers) {
                throw bad("moe_layer_freq", which + "moe_layer_freq gives " + (pattern.size() > layers ? "more" : "")
                        + (pattern.size() > layers ? " than " : pattern.size() + " of ") + layers + " layers");
            }
            for (int i = 0; i < layers; i++) {
                out[i] = pattern.get(i);
            }
            return out;
        }
    }

    private static String clip(String s) {
        return InvalidInputException.printable(s, 60);
    }

    /** The argument names read (canonical, then aliases), for documentation and tests. */
    public static Set<String> argumentNames() {
        return Collections.unmodifiableSet(KEYS.keySet());
    }
}
