package org.scaledl.transformer;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import org.scaledl.InvalidInputException;
import org.scaledl.transformer.TransformerSpec.Block;

/**
 * Reads a Hugging Face {@code config.json} into a {@link TransformerSpec}, without weights or a download. Model types:
 * {@code llama} (Llama 2, 3, 3.1), {@code mistral}, {@code mixtral}, {@code qwen2}, {@code qwen3},
 * {@code qwen3_moe}, {@code deepseek_v3} (multi-head latent attention, routed and shared experts, dense first
 * layers; the multi-token-prediction modules are trained on the last pipeline stage, not part of the graph),
 * {@code gpt_oss} (alternating sliding-window layers, experts with biases, attention sinks, the clamped SwiGLU of
 * {@code swiglu_limit}), {@code nemotron}
 * (squared ReLU), {@code nemotron_h} (hybrid Mamba-2,
 * attention, MLP and expert layers from {@code hybrid_override_pattern}), {@code llama4} (its {@code text_config}:
 * experts every {@code interleave_moe_layer_step}-th layer with a shared expert, chunked attention),
 * {@code qwen3_next} and {@code qwen3_5} / {@code qwen3_5_moe} (their {@code text_config}: Gated DeltaNet linear
 * attention in three layers of four, described as a Mamba-2 mixer of the same projections, convolution, heads and
 * state; gated full attention; experts with a shared expert), {@code gpt2},
 * {@code bert} (and {@code roberta}), {@code opt}, {@code t5} (v1.0 and v1.1), GPT-3-style configurations written
 * in GPT-2's keys, {@code gemma}, {@code gemma2}, {@code gemma3} and {@code gemma4} (their {@code text_config};
 * norms after each sub-layer, Gemma 2's capped scores and logits, Gemma 4's full-attention layers of their own head
 * size with keys as values, and its MLP and experts side by side), {@code phi3}, {@code qwen2_moe}, {@code olmo2},
 * {@code olmo3}, {@code granite}, {@code glm4}, {@code starcoder2}, {@code gpt_neox}, and a wrapper of another type
 * whose {@code text_config} names one of these (its text model, said). Every size the spec needs is read from the
 * keys those models' configuration classes define, with
 * their documented defaults where a key is absent (DeepSeek-V2's and Kimi's read with DeepSeek-V3's class defaults; a
 * size left out is warned about). The attention of the Llama-family and newer models is fused
 * (FlashAttention, as they are trained); dropouts are there only where the configuration has them.
 *
 * <p>Every integer is range-checked before use (a layer count of 2³² + 32 is refused, not read as 32), every
 * error names the file and the key.
 *
 * <pre>{@code
 * TransformerSpec llama = HuggingFaceConfig.read(Path.of("llama-2-7b/config.json"));
 * }</pre>
 */
public final class HuggingFaceConfig {
    private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(HuggingFaceConfig.class);
    /**
     * The sizes every configuration names: one it leaves out takes its class's default, with a warning. (Feed-forward
     * and expert sizes are left out: a model of experts alone omits the dense width, a dense one the experts.)
     */
    private static final java.util.Set<String> ARCHITECTURE_KEYS = java.util.Set.of("hidden_size",
            "num_hidden_layers", "num_attention_heads", "vocab_size", "n_embd", "n_layer", "n_head", "d_model",
            "num_layers", "num_heads", "q_lora_rank", "kv_lora_rank", "qk_nope_head_dim", "qk_rope_head_dim",
            "v_head_dim", "n_routed_experts", "index_topk", "index_n_heads", "index_head_dim");
    /** A Hugging Face repository's name ({@code owner/model}), which a path to nothing may be. */
    private static final java.util.regex.Pattern REPOSITORY_ID = java.util.regex.Pattern.compile(
            "[A-Za-z0-9][A-Za-z0-9_.-]*/[A-Za-z0-9][A-Za-z0-9_.-]*");
    /** A configuration is a few kilobytes; anything past a megabyte is not one. */
    private static final long MAX_BYTES = 1 << 20;
    /** The model types read. */
    public static final List<String> MODEL_TYPES = List.of("llama", "mistral", "mixtral", "qwen2", "qwen3",
            "qwen3_moe", "deepseek_v2", "deepseek_v3", "deepseek_v32", "kimi_k2", "kimi_k25", "glm4_moe",
            "glm_moe_dsa", "gpt_oss", "nemotron", "nemotron_h", "llama4", "gpt2", "bert", "roberta", "opt", "t5",
            "qwen3_next", "qwen3_5", "qwen3_5_moe", "qwen3_vl", "qwen3_vl_moe", "qwen2_moe", "gemma", "gemma2",
            "gemma3", "gemma3_text", "gemma4", "gemma4_text", "phi3", "olmo2", "olmo3", "granite", "glm4", "starcoder2",
            "gpt_neox");
    /** The largest size of a hidden, inner or head dimension read. */
    private static final long MAX_SIZE = TransformerSpec.MAX_SIZE;
    /** The most layers read. */
    private static final long MAX_LAYERS = 10_000;
    /** The largest vocabulary read. */
    private static final long MAX_VOCAB = TransformerSpec.MAX_VOCAB;

    private HuggingFaceConfig() {
    }

    /**
     * Reads a configuration file, or the {@code config.json} of a model's folder (as Hugging Face saves one).
     *
     * @throws InvalidInputException naming the file and the key for a missing, unreadable or unsupported
     *         configuration (a relative {@code owner/model} that is no file is said to be a repository's name,
     *         which is not downloaded)
     */
    public static TransformerSpec read(Path file) {
        java.util.Objects.requireNonNull(file, "file");
        file = configurationFile(file);
        if (Files.isDirectory(file)) {
            // a folder is read as the config.json it holds (as Hugging Face saves a model): this one holds none
            throw InvalidInputException.inSource(file.toString(), "a folder without a config.json: give the model's "
                    + "config.json file, or the folder Hugging Face saved it in");
        }
        byte[] bytes;
        try (InputStream in = org.scaledl.InputFiles.open(file)) {
            bytes = in.readNBytes((int) MAX_BYTES + 1);
        } catch (IOException e) {
            if (e instanceof java.nio.file.NoSuchFileException && !file.isAbsolute() && file.getNameCount() == 2
                    && !file.getFileName().toString().endsWith(".json")
                    && REPOSITORY_ID.matcher(file.toString().replace('\\', '/')).matches()) {
                // a Hugging Face repository's name, as a user would type it for from_pretrained
                throw InvalidInputException.inSource(file.toString(), "cannot read the model configuration: no such "
                        + "file (a Hugging Face repository is not downloaded: save its config.json and give that "
                        + "file or its folder)");
            }
            throw InvalidInputException.unreadable(file, "cannot read the model configuration", e);
        }
        if (bytes.length > MAX_BYTES) {
            throw InvalidInputException.inSource(file.toString(), "a model configuration of more than " + MAX_BYTES
                    + " bytes is not one");
        }
        String name = file.getParent() == null ? file.getFileName().toString()
                : file.getParent().getFileName() + "/" + file.getFileName();
        return parse(bytes, file.toString(), name.replace("/config.json", ""));
    }

    /**
     * The configuration a path names: a model's folder (as Hugging Face saves one) names its {@code config.json}
     * where it holds one; any other path names itself.
     */
    public static Path configurationFile(Path path) {
        Path inFolder = path.resolve("config.json");
        return Files.isDirectory(path) && Files.isRegularFile(inFolder) ? inFolder : path;
    }

    /**
     * Reads a configuration from bytes.
     *
     * @param source what to call the bytes in errors
     * @param name   the model's name for reports
     * @throws InvalidInputException naming the source and the key
     */
    public static TransformerSpec parse(byte[] bytes, String source, String name) {
        java.util.Objects.requireNonNull(bytes, "bytes");
        java.util.Objects.requireNonNull(source, "source");
        java.util.Objects.requireNonNull(name, "name");
        JsonNode c;
        try {
            c = org.scaledl.JsonTrees.readDocument(bytes);
        } catch (JsonProcessingException e) {
            throw InvalidInputException.invalidJson(source, "not a JSON model configuration", e);
        } catch (IOException e) {
            throw InvalidInputException.inSource(source, "cannot read the model configuration: " + e.getMessage());
        }
        if (c == null || !c.isObject()) {
            throw InvalidInputException.inSource(source, "not a JSON object");
        }
        // what reading assumes or changes, logged and kept on the specification (TransformerSpec.readNotes)
        List<String> said = new ArrayList<>();
        String type = new Reader(c, source, said).text("model_type", guessType(c)).toLowerCase(Locale.ROOT);
        String declared = type;
        // the class a tool names, as the file gives it (a wrapper's own, not its text model's)
        JsonNode architectures = c.path("architectures");
        if (c.path("vision_config").isObject()) {
            // multimodal: the text model is what is built; images through the vision encoder cost more
            say(said, "{}: a multimodal configuration (vision_config): its text model is predicted, not the vision "
                    + "encoder (a step with images takes longer)", source);
        }
        checkTextConfig(c, source, "text_config");
        JsonNode text = c.path("text_config");
        if (!MODEL_TYPES.contains(type) && text.isObject() && text.path("model_type").isTextual()
                && MODEL_TYPES.contains(text.path("model_type").asText().toLowerCase(Locale.ROOT))) {
            // a wrapper of a text model scaledl reads (LLaVA, Mistral 3, PaliGemma...): its text model, said
            String inner = text.path("model_type").asText().toLowerCase(Locale.ROOT);
            say(said, "{}: {} is read as its text model's, {} (text_config)", source, type.isEmpty() ? "a configuration "
                    + "without model_type" : "model_type '" + printable(type) + "'", inner);
            overridden(said, source, c);
            c = textModel(c);
            type = inner;
            checkTextConfig(c, source, "text_config.text_config");
        }
        if ((type.equals("llama4") || type.startsWith("qwen3_5") || type.equals("kimi_k25")
                || type.startsWith("qwen3_vl") || type.equals("gemma3") || type.equals("gemma4"))
                && c.path("text_config").isObject()) {
            // the text model's keys, and where it leaves one out the outer configuration's (Qwen 3.5 and Llama 4
            // write tie_word_embeddings and the attention implementation outside text_config)
            String inner = c.path("text_config").path("model_type").asText("").toLowerCase(Locale.ROOT);
            if (!inner.isEmpty() && !inner.equals(type) && !inner.equals(type + "_text") && !(type.equals("kimi_k25")
                    && (inner.equals("kimi_k2") || inner.startsWith("deepseek_v3")))) {
                // another family's text model under this wrapper: read as the wrapper's family, as transformers does
                say(said, "{}: its text_config's model_type '{}' is not {}'s: the text model is read as {}'s, its "
                        + "keys where they name the same thing, that family's defaults for the rest", source,
                        printable(inner), type, type);
            }
            overridden(said, source, c);
            c = textModel(c);
        } else if (c.path("text_config").isObject() && !c.path("text_config").isEmpty()) {
            // a text model's keys where this type's class reads them at the top level
            say(said, "{}: text_config is not read: model_type '{}' takes its keys at the top level", source,
                    printable(type));
        }
        Reader r = new Reader(c, source, said);
        try {
            TransformerSpec spec = switch (type) {
                case "gpt2", "gpt3" -> gpt2(r, name);
                case "bert", "roberta" -> bert(r, name, type);
                case "llama", "mistral", "qwen2", "qwen3", "mixtral", "qwen3_moe", "qwen2_moe", "phi3", "olmo2",
                        "olmo3", "granite", "glm4" -> llama(r, name, type);
                case "gemma", "gemma2", "gemma3", "gemma3_text", "gemma4", "gemma4_text" -> gemma(r, name, type);
                case "starcoder2" -> starcoder2(r, name);
                case "gpt_neox" -> gptNeox(r, name);
                // Qwen3-VL's text models are Qwen3's (dense and with experts)
                case "qwen3_vl", "qwen3_vl_text" -> llama(r, name, "qwen3");
                case "qwen3_vl_moe", "qwen3_vl_moe_text" -> llama(r, name, "qwen3_moe");
                case "deepseek_v2", "deepseek_v3", "deepseek_v32", "kimi_k2", "kimi_k25", "glm_moe_dsa" ->
                        deepseek(r, name, type);
                case "glm4_moe" -> glm4Moe(r, name);
                case "gpt_oss" -> gptOss(r, name);
                case "nemotron" -> nemotron(r, name);
                case "nemotron_h" -> nemotronH(r, name);
                case "llama4", "llama4_text" -> llama4(r, name);
                case "opt" -> opt(r, name);
                case "t5" -> t5(r, name);
                case "qwen3_next", "qwen3_5", "qwen3_5_moe", "qwen3_5_text", "qwen3_5_moe_text" ->
                        qwenNext(r, name, type);
                default -> throw InvalidInputException.inSource(source, (type.isEmpty() ? "no model_type"
                        : "model_type '" + printable(type) + "' is not supported") + " (supported: "
                        + String.join(", ", MODEL_TYPES) + "; a Llama-layout decoder reads as \"model_type\": "
                        + "\"llama\")");
            };
            checkUnread(r, type, declared, architectures);
            TransformerSpec read = attentionImplementation(r).map(limit -> limit == 0 ? spec.withFusedAttention(false)
                    : fusedUpTo(spec.withFusedAttention(true), limit)).orElse(spec);
            long widest = widestHead(read);
            if (read.fusedAttention() && widest > read.fusedHeadLimit()) {
                r.say("{}: attention heads of {} are wider than fused attention kernels train ({} at most: "
                        + "FlashAttention, cuDNN): those layers are predicted with an unfused core, their scores in "
                        + "memory, as Transformer Engine runs them (\"_attn_implementation\": \"sdpa\" or "
                        + "\"flex_attention\" for PyTorch's kernels, which take them fused)", source, widest,
                        read.fusedHeadLimit());
            }
            if (read.maxPositions() == 0 && r.has("max_position_embeddings") && !r.isNull("max_position_embeddings")) {
                // rotary (or relative) positions: the configured context, so a longer sequence is said, not refused
                // (a value out of any range says nothing and is left out, as the model does not depend on it)
                try {
                    read = read.toBuilder().contextPositions(Math.max(r.positions("max_position_embeddings", 1),
                            scaledContext(r))).build();
                } catch (InvalidInputException ignored) {
                    // not a context length
                }
            }
            if (r.has("quantization_config") && !r.isNull("quantization_config")) {
                // a checkpoint stored in another format (FP8 blocks, MXFP4 experts): the job's precision is the option's
                JsonNode q = r.c().get("quantization_config");
                String method = q.isObject() && q.path("quant_method").isTextual() ? q.path("quant_method").asText()
                        : "";
                // said by a prediction where it matters (serving, a frozen LoRA base), not on every reading: a
                // pretraining job takes the checkpoint's architecture only
                read = read.toBuilder().storedQuantization(method.isEmpty() ? "unnamed" : printable(method)).build();
            }
            return said.isEmpty() ? read : read.withReadNotes(said);
        } catch (IllegalArgumentException e) {
            // the builder names the model; where that name is the file's own (a configuration not called
            // config.json), once is enough
            String m = e.getMessage() == null ? "" : e.getMessage();
            // a config.json is named by its folder (HuggingFaceConfig.read): the folder is in the path already
            boolean named = source.endsWith(name) || source.endsWith(java.io.File.separator + name
                    + java.io.File.separator + "config.json") || source.equals(name + java.io.File.separator
                    + "config.json");
            throw InvalidInputException.inSource(source, named && m.startsWith(name + ": ")
                    ? m.substring(name.length() + 2) : m);
        }
    }

    /**
     * The context a {@code rope_scaling} (or {@code rope_parameters}) extends to: its {@code factor} times its
     * {@code original_max_position_embeddings} (YaRN's, LongRoPE's, Llama 3's), 0 where it states no such extension.
     */
    private static long scaledContext(Reader r) {
        for (String key : new String[] {"rope_scaling", "rope_parameters"}) {
            JsonNode rs = r.c().get(key);
            if (rs != null && rs.isObject() && rs.path("factor").isNumber()
                    && rs.path("original_max_position_embeddings").isNumber()) {
                double x = rs.path("factor").asDouble() * rs.path("original_max_position_embeddings").asDouble();
                if (x > 0 && x < (1L << 26)) {
                    return (long) x;
                }
            }
        }
        return 0;
    }

    /** A fused spec whose fused core takes heads up to {@code limit} wide. */
    private static TransformerSpec fusedUpTo(TransformerSpec spec, long limit) {
        return limit == spec.fusedHeadLimit() ? spec : spec.toBuilder().fusedHeadLimit(limit).build();
    }

    /**
     * The widest attention head of any layer with attention ({@link TransformerSpec#headWidth}, as the graph builds
     * them); 0 without attention.
     */
    private static long widestHead(TransformerSpec spec) {
        long widest = 0;
        for (TransformerSpec.Block b : spec.blocks()) {
            if (b.mixer() == TransformerSpec.Block.Mixer.ATTENTION) {
                widest = Math.max(widest, spec.headWidth(b));
            }
        }
        return widest;
    }

    /**
     * The mixture-of-experts and layer-layout keys of the classes scaledl reads: one that a configuration's own type
     * does not read (Qwen's {@code num_experts} in a Mixtral configuration) leaves the model as that type's keys say.
     */
    private static final List<String> STRUCTURE_KEYS = List.of("num_experts", "n_routed_experts",
            "num_local_experts", "moe_intermediate_size", "first_k_dense_replace", "mlp_only_layers",
            "shared_expert_intermediate_size", "n_shared_experts", "decoder_sparse_step", "moe_layer_freq",
            "interleave_moe_layer_step", "num_experts_per_tok");

    /** A state-space or recurrent model's class ({@code MambaForCausalLM}, {@code JambaForCausalLM}...). */
    private static final java.util.regex.Pattern STATE_SPACE_CLASS = java.util.regex.Pattern.compile(
            "(?i)^(mamba|mamba2|jamba|falconh1|falcon_h1|falconmamba|zamba|zamba2|bamba|granitemoehybrid|rwkv|"
            + "recurrentgemma|xlstm|hymba|plamo2|lfm2)");

    /** The keys state-space (Mamba) layers are described by, in the classes that have them. */
    private static final List<String> STATE_SPACE_KEYS = List.of("ssm_cfg", "attn_layer_indices", "mamba_d_state",
            "mamba_d_conv", "mamba_expand", "mamba_n_heads", "mamba_d_head", "ssm_state_size", "layers_block_type",
            "attn_layer_period", "attn_layer_offset", "mamba_num_heads", "mamba_head_dim", "hybrid_override_pattern");

    /**
     * What the classes read besides the model's sizes, checked once the model is read: a structure key this type
     * does not read is said (transformers ignores it too, but an edit meant to change the experts changes nothing);
     * a router's {@code topk_method} and {@code scoring_func}, a {@code rope_scaling}'s (or {@code
     * rope_parameters}') {@code factor} and a {@code partial_rotary_factor} that no class takes are refused.
     */
    private static void checkUnread(Reader r, String type, String declared, JsonNode arch) {
        JsonNode c = r.c();
        if (arch.isArray() && arch.size() > 0 && arch.get(0).isTextual()) {
            String cls = arch.get(0).asText();
            if (STATE_SPACE_CLASS.matcher(cls).find() && !r.seen().stream().anyMatch(STATE_SPACE_KEYS::contains)) {
                // a recurrent or state-space model's class over a transformer's keys: predicted as the transformer,
                // its time would be another model's
                throw InvalidInputException.inSource(r.source(), "architectures names " + Reader.clip(arch.get(0))
                        + ", a state-space or recurrent (Mamba-like) model, where model_type '" + printable(declared)
                        + "' reads a transformer: scaledl models Mamba layers in Nemotron-H (nemotron_h) only; one "
                        + "of the two is a slip");
            }
            Optional<String> known = architectureType(cls);
            known.filter(named -> !sameFamily(named, declared)
                    && !sameFamily(named, type)).ifPresent(named ->
                    // the class a tool names is another supported family's than the type transformers builds: one of
                    // the two is a slip
                    r.say("{}: architectures names {} (a {} class) where model_type is '{}': the model is read as "
                            + "{}'s", r.source(), Reader.clip(arch.get(0)), named, printable(declared), type));
            if (known.isEmpty() && MODEL_TYPES.contains(declared)) {
                // (a wrapper's class, LLaVA's, is said where its text model is read)
                r.say("{}: architectures names {}, a class scaledl does not know: the model is read as model_type "
                        + "'{}' says", r.source(), Reader.clip(arch.get(0)), printable(declared));
            }
        }
        for (String key : STATE_SPACE_KEYS) {
            if (c.has(key) && !c.get(key).isNull() && !r.seen().contains(key)) {
                throw InvalidInputException.inSource(r.source(), key + " describes state-space (Mamba) layers, which "
                        + "model_type '" + printable(type) + "' does not read: predicted as its transformer, the time "
                        + "would be another model's (scaledl models such layers in Nemotron-H, nemotron_h, only)");
            }
        }
        for (String key : STRUCTURE_KEYS) {
            if (c.has(key) && !c.get(key).isNull() && !r.seen().contains(key)) {
                r.say("{}: {} is not read for model_type '{}': the model is what the keys that type reads say (its "
                        + "experts, if any, come from those)", r.source(), key, printable(type));
            }
        }
        oneOf(r, "topk_method", "noaux_tc", "greedy", "group_limited_greedy");
        oneOf(r, "scoring_func", "softmax", "sigmoid");
        JsonNode legacy = c.get("rope_scaling");
        JsonNode current = c.get("rope_parameters");
        if (legacy != null && legacy.isObject() && current != null && current.isObject()
                && !sameScaling(legacy, current)) {
            // transformers' newer name and its older one, saying two scalings: which the context is is a slip's
            throw InvalidInputException.inSource(r.source(), "rope_scaling " + Reader.clip(legacy) + " and "
                    + "rope_parameters " + Reader.clip(current) + " say two rotary scalings: give one");
        }
        for (String key : new String[] {"rope_scaling", "rope_parameters"}) {
            JsonNode rs = c.get(key);
            if (rs == null || rs.isNull()) {
                continue;
            }
            if (!rs.isObject()) {
                throw InvalidInputException.inSource(r.source(), key + " must be an object (its rope_type and factor) "
                        + "or null: " + Reader.clip(rs));
            }
            positiveFactor(r, key, rs);
            String ropeType = rs.path("rope_type").asText(rs.path("type").asText(""));
            if (!ropeType.isEmpty() && !ROPE_TYPES.contains(ropeType)) {
                // transformers refuses a type it has no initialiser for; its factor still extends the context read
                r.say("{}: {}'s type '{}' is none transformers knows ({}): a slip? The rotary scaling changes no "
                        + "cost; its factor times original_max_position_embeddings, where given, is the context the "
                        + "sequence is checked against", r.source(), key, printable(ropeType), String.join(", ",
                                ROPE_TYPES));
            }
            for (java.util.Iterator<java.util.Map.Entry<String, JsonNode>> it = rs.fields(); it.hasNext();) {
                java.util.Map.Entry<String, JsonNode> e = it.next();
                if (e.getValue().isObject()) {
                    // per layer type (Gemma 4's full_attention and sliding_attention)
                    positiveFactor(r, key + "." + e.getKey(), e.getValue());
                }
            }
        }
        JsonNode partial = c.get("partial_rotary_factor");
        if (partial != null && !partial.isNull() && !(partial.isNumber() && partial.asDouble() > 0
                && partial.asDouble() <= 1)) {
            throw InvalidInputException.inSource(r.source(), "partial_rotary_factor must be a number in (0, 1] (the "
                    + "share of a head that is rotated): " + Reader.clip(partial));
        }
    }

    /**
     * The rotary scalings transformers has an initialiser for ({@code ROPE_INIT_FUNCTIONS}, with {@code default}),
     * the older names it maps to them ({@code su}: LongRoPE; {@code dynamic}'s NTK) and multimodal rotary types that
     * scale nothing ({@code mrope}), and Gemma 4's {@code proportional}.
     */
    private static final java.util.List<String> ROPE_TYPES = java.util.List.of("default", "linear", "dynamic", "yarn",
            "longrope", "llama3", "su", "mrope", "proportional");

    /**
     * The supported model type a class name ({@code Qwen3MoeForCausalLM}) begins with, the longest such: empty where
     * none does (a wrapper's class, LLaVA's).
     */
    private static Optional<String> architectureType(String arch) {
        String a = arch.toLowerCase(Locale.ROOT).replace("_", "");
        String best = null;
        for (String t : MODEL_TYPES) {
            String compact = t.replace("_", "");
            if (a.startsWith(compact) && (best == null || compact.length() > best.replace("_", "").length())) {
                best = t;
            }
        }
        return Optional.ofNullable(best);
    }

    /**
     * Whether two model types build one family's model: a type and its text model ({@code gemma3_text}), DeepSeek's
     * and the models of its classes (Kimi K2's configuration names {@code DeepseekV3ForCausalLM}), Llama's and
     * Mistral's (converted checkpoints name Llama's class), a type and the types it prefixes ({@code qwen3_vl_moe}).
     */
    private static boolean sameFamily(String a, String b) {
        String x = family(a);
        String y = family(b);
        return x.equals(y) || x.startsWith(y) || y.startsWith(x);
    }

    private static String family(String type) {
        String t = type.endsWith("_text") ? type.substring(0, type.length() - "_text".length()) : type;
        if (t.startsWith("deepseek") || t.startsWith("kimi_k2")) {
            return "deepseek";
        }
        return t.equals("mistral") ? "llama" : t;
    }

    /** A text key that names a method is one of {@code allowed} where given. */
    private static void oneOf(Reader r, String key, String... allowed) {
        JsonNode n = r.c().get(key);
        if (n != null && !n.isNull() && !(n.isTextual() && List.of(allowed).contains(n.asText()))) {
            throw InvalidInputException.inSource(r.source(), key + " " + Reader.clip(n) + " is not one transformers' classes "
                    + "take (" + String.join(", ", allowed) + ")");
        }
    }

    /** A RoPE scaling's {@code factor}, where given, is a positive finite number. */
    private static void positiveFactor(Reader r, String key, JsonNode rs) {
        JsonNode f = rs.get("factor");
        if (f != null && !f.isNull() && !(f.isNumber() && Double.isFinite(f.asDouble()) && f.asDouble() > 0)) {
            throw InvalidInputException.inSource(r.source(), key + ".factor must be a positive number: " + Reader.clip(f));
        }
    }

    /** A configuration's {@code text_config} (at {@code key}) is an object or absent. */
    private static void checkTextConfig(JsonNode c, String source, String key) {
        if (c.has("text_config") && !c.get("text_config").isNull() && !c.get("text_config").isObject()) {
            throw InvalidInputException.inSource(source, key + " must be an object (the text model's keys)");
        }
    }

    /** Whether two values are the same: equal, or numbers of one value however written ({@code 4096}, {@code 4096.0}). */
    private static boolean sameValue(JsonNode a, JsonNode b) {
        return a.equals(b) || a.isNumber() && b.isNumber() && a.decimalValue().compareTo(b.decimalValue()) == 0;
    }

    /** Says each size outside {@code text_config} that the text model's own, read instead, contradicts. */
    private static void overridden(List<String> said, String source, JsonNode c) {
        JsonNode text = c.path("text_config");
        for (String key : ARCHITECTURE_KEYS) {
            JsonNode outer = c.get(key);
            JsonNode inner = text.get(key);
            if (outer != null && !outer.isNull() && inner != null && !inner.isNull() && !sameValue(outer, inner)) {
                say(said, "{}: {} = {} outside text_config is not read: the text model's, {}, is", source, key,
                        Reader.clip(outer), Reader.clip(inner));
            }
        }
    }

    /** The text model's keys over the outer configuration's, which fill those it leaves out. */
    private static ObjectNode textModel(JsonNode c) {
        ObjectNode merged = ((ObjectNode) c).deepCopy();
        merged.remove("text_config");
        merged.setAll((ObjectNode) c.path("text_config"));
        return merged;
    }

    private static String printable(String s) {
        return InvalidInputException.printable(s, 40);
    }

    /**
     * The attention implementation a configuration names ({@code _attn_implementation} or {@code attn_implementation},
     * as Hugging Face saves it), as the widest head its fused core takes, 0 unfused: {@code eager} unfused;
     * {@code flash_attention_2} and the like and {@code te} (Transformer Engine) fused up to
     * {@link TransformerSpec#MAX_FUSED_HEAD_SIZE}; {@code sdpa} and {@code flex_attention} fused at any head size
     * (PyTorch's memory-efficient attention and FlexAttention take any).
     */
    private static java.util.Optional<Long> attentionImplementation(Reader r) {
        String saved = r.text("_attn_implementation", "");
        String given = r.text("attn_implementation", "");
        if (!saved.isEmpty() && !given.isEmpty() && !saved.equalsIgnoreCase(given)) {
            throw new IllegalArgumentException("_attn_implementation '" + printable(saved) + "' and "
                    + "attn_implementation '" + printable(given) + "' name two implementations: give one");
        }
        for (String key : List.of("_attn_implementation", "attn_implementation")) {
            String v = r.text(key, "");
            if (!v.isEmpty()) {
                String k = v.toLowerCase(Locale.ROOT);
                if (k.equals("eager")) {
                    return java.util.Optional.of(0L);
                }
                if (k.equals("sdpa") || k.startsWith("flex")) {
                    return java.util.Optional.of(TransformerSpec.MAX_SIZE);
                }
                if (k.startsWith("flash") || k.equals("te")) {
                    return java.util.Optional.of(TransformerSpec.MAX_FUSED_HEAD_SIZE);
                }
                throw new IllegalArgumentException(key + " '" + printable(v) + "' is not known (eager, sdpa, "
                        + "flash_attention_2 or _3, flex_attention, te)");
            }
        }
        return java.util.Optional.empty();
    }

    private static String guessType(JsonNode c) {
        if (c.has("n_embd")) {
            return "gpt2";
        }
        return "";
    }

    /**
     * A configuration's key, or another name for it where only that is given: the name its Hugging Face class maps to
     * it (its {@code attribute_map}: GPT-2's {@code hidden_size} for {@code n_embd}, GPT-OSS's {@code num_experts} for
     * {@code num_local_experts}) or an original checkpoint's (GPT-OSS's {@code experts_per_token}); the two given
     * differently are refused.
     */
    private static String attributeKey(Reader r, String key, String alias) {
        return attributeKey(r, key, alias, "Hugging Face's other name for it");
    }

    /** {@link #attributeKey(Reader, String, String)}, the alias described as {@code what} in a refusal. */
    private static String attributeKey(Reader r, String key, String alias, String what) {
        // both names read (the class maps one to the other)
        r.seen().add(key);
        r.seen().add(alias);
        JsonNode a = r.c().get(key);
        JsonNode b = r.c().get(alias);
        // (a null is no value: the other name's is read, or the default)
        boolean both = a != null && b != null && !a.isNull() && !b.isNull();
        boolean same = !both || sameValue(a, b);
        if (!same) {
            // the class would take one or the other by the order it sets them: which was meant is not known
            throw InvalidInputException.inSource(r.source(), key + " and " + alias + " (" + what + ") disagree: "
                    + InvalidInputException.printable(a.toString(), 60) + " and "
                    + InvalidInputException.printable(b.toString(), 60) + "; give one");
        }
        return a != null && !a.isNull() || b == null || b.isNull() ? key : alias;
    }

    private static TransformerSpec gpt2(Reader r, String name) {
        long h = r.size(attributeKey(r, "n_embd", "hidden_size"), -1);
        long inner = r.has("n_inner") && !r.isNull("n_inner") ? r.size("n_inner", -1) : 4 * h;
        return TransformerSpec.decoder(name, h, r.size(attributeKey(r, "n_head", "num_attention_heads"), -1),
                r.layers(attributeKey(r, "n_layer", "num_hidden_layers"), -1), r.vocab("vocab_size", 50257))
                .maxPositions(r.positions(attributeKey(r, "n_positions", "max_position_embeddings"), 1024)).ffn(inner)
                .tiedEmbeddings(r.bool("tie_word_embeddings", true))
                .ffnKind(plainActivation(r, "activation_function", "gelu_new"))
                .attentionDropout(r.rate("attn_pdrop", 0.1) > 0).hiddenDropout(r.rate("resid_pdrop", 0.1) > 0
                        || r.rate("embd_pdrop", 0.1) > 0).build();
    }

    private static TransformerSpec bert(Reader r, String name, String type) {
        long maxPositions = r.positions("max_position_embeddings", 512);
        return TransformerSpec.encoder(name, r.size("hidden_size", 768), r.size("num_attention_heads", 12),
                r.layers("num_hidden_layers", 12), r.vocab("vocab_size", type.equals("bert") ? 30522 : 50265))
                .ffn(r.size("intermediate_size", 3072)).maxPositions(maxPositions)
                .typeVocab(r.count("type_vocab_size", 2, 0, 1 << 20)).ffnKind(plainActivation(r, "hidden_act", "gelu"))
                .attentionDropout(r.rate("attention_probs_dropout_prob", 0.1) > 0)
                .hiddenDropout(r.rate("hidden_dropout_prob", 0.1) > 0).build();
    }

    /**
     * The Llama family: Llama 2/3, Mistral, Mixtral, Qwen2, Qwen3, Qwen2-MoE and Qwen3-MoE, and the models of its
     * layout: Phi-3 ({@code phi3}: its fused projections are the same products), OLMo 2 and 3 ({@code olmo2},
     * {@code olmo3}: norms over the whole query and key projections; its norms after each sub-layer, where Llama's
     * are before, cost the same; OLMo 3's windows on three layers of four, or as its {@code layer_types} name them),
     * Granite ({@code granite}: its
     * scalar multipliers cost nothing) and GLM-4 ({@code glm4}: a norm after each sub-layer too, biases on the
     * queries, keys and values only). Qwen2-MoE's shared expert is an MLP of
     * {@code shared_expert_intermediate_size} beside the routed ones; its sigmoid gate (one weight vector a layer) is
     * left out.
     */
    private static TransformerSpec llama(Reader r, String name, String type) {
        // the newer types' own class defaults; the older ones take Llama's, the inner size said
        LlamaDefaults d = switch (type) {
            case "phi3" -> new LlamaDefaults(32, 32, 3072, 32064, 0, 8192, 0);
            case "qwen2_moe" -> new LlamaDefaults(16, 24, 2048, 151936, 16, 5632, 0);
            case "olmo2", "olmo3" -> new LlamaDefaults(32, 32, 4096, 50304, 0, 11008, 0);
            case "granite" -> new LlamaDefaults(32, 32, 4096, 32000, 0, 11008, 0);
            case "glm4" -> new LlamaDefaults(32, 40, 4096, 151552, 2, 13696, 128);
            default -> null;
        };
        // Qwen's classes default to other sizes than Llama's (Qwen3-MoE's to a hidden size of 2,048 and 24 layers, all
        // to a vocabulary of 151,936): their core sizes are required, not taken as Llama's
        boolean required = d == null && type.startsWith("qwen");
        long heads = r.size("num_attention_heads", d != null ? d.heads() : 32);
        int layers = r.layers("num_hidden_layers", d != null ? d.layers() : required ? -1 : 32);
        long hidden = r.size("hidden_size", d != null ? d.hidden() : required ? -1 : 4096);
        boolean glm = type.equals("glm4");
        // GLM-4's class biases its queries, keys and values unless told otherwise
        boolean attentionBias = r.bool("attention_bias", glm);
        // a gated MLP whatever its activation (SiLU, GELU: the same cost), but an activation no model has is a slip
        activation(r, "hidden_act", "silu");
        long vocab = r.vocab("vocab_size", d != null ? d.vocab() : required ? -1 : 32000);
        // (null is transformers' "as many as the attention heads", phi-2's: no slip to say)
        // (Qwen3's class defaults to 32 key/value heads, Qwen3-MoE's to 4: said, as the class takes them)
        boolean qwen3 = type.equals("qwen3");
        long kvHeads = d != null ? r.size("num_key_value_heads", d.kvHeads() > 0 ? d.kvHeads() : heads)
                : r.isNull("num_key_value_heads") ? heads
                : r.has("num_key_value_heads") ? r.size("num_key_value_heads", heads)
                : qwen3 || type.equals("qwen3_moe") ? r.sizeSaid("num_key_value_heads", qwen3 ? 32 : 4,
                        (qwen3 ? "Qwen3" : "Qwen3-MoE") + "'s class default")
                : r.sizeSaid("num_key_value_heads", heads, "as many as the attention heads, as transformers' "
                        + "Llama-family classes take a missing one");
        long inner = d != null ? r.size("intermediate_size", d.inner()) : r.sizeSaid("intermediate_size", 11008,
                "Llama's class default; Mistral's and Qwen's classes default to others: give it");
        // Qwen2-MoE's class biases its queries, keys and values (qkv_bias), Qwen2's always
        boolean qkvBias = type.equals("qwen2_moe") ? r.bool("qkv_bias", true) : type.equals("qwen2") || attentionBias;
        TransformerSpec.Builder b = TransformerSpec.decoder(name, hidden, heads, layers, vocab).kvHeads(kvHeads)
                .ffn(inner).ffnKind(TransformerSpec.FfnKind.SWIGLU)
                .norm(TransformerSpec.Norm.RMS_NORM).bias(false).qkvBias(qkvBias)
                .outBias(attentionBias && !glm).mlpBias(r.bool("mlp_bias", false))
                .tiedEmbeddings(r.bool("tie_word_embeddings", false)).sandwichNorm(glm)
                .qkNorm(type.startsWith("qwen3") || type.startsWith("olmo")).wholeQkNorm(type.startsWith("olmo"))
                .attentionDropout(r.rate("attention_dropout", 0) > 0).hiddenDropout(false).fusedAttention(true);
        if (r.has("head_dim") && !r.isNull("head_dim")) {
            b.headDim(r.size("head_dim", -1));
        } else if (d != null && d.headDim() > 0) {
            b.headDim(d.headDim());
        } else if (qwen3 && !r.has("head_dim")) {
            // Qwen3's class sets a head of 128 whatever the hidden size and heads (Qwen3-32B: 5,120 over 64 heads)
            b.headDim(r.sizeSaid("head_dim", 128, "Qwen3's class default, not the hidden size over the heads"));
        } else if (type.equals("qwen3_moe") && !r.has("head_dim")) {
            r.sizeSaid("head_dim", hidden / Math.max(1, heads), "the hidden size over the heads, as Qwen3-MoE's class "
                    + "takes a missing one");
        }
        List<Block> bl;
        if (type.equals("mixtral")) {
            int experts = r.countSaid("num_local_experts", 8, 1, TransformerSpec.Moe.MAX_EXPERTS);
            b.experts(experts, r.topK("num_experts_per_tok", 2, experts, "num_local_experts"));
            bl = new ArrayList<>(java.util.Collections.nCopies(layers, Block.moe()));
        } else if (type.equals("qwen3_moe") || type.equals("qwen2_moe")) {
            boolean two = type.equals("qwen2_moe");
            int experts = r.countSaid("num_experts", two ? 60 : 128, 1, TransformerSpec.Moe.MAX_EXPERTS);
            b.moe(new TransformerSpec.Moe(experts, r.topK("num_experts_per_tok", two ? 4 : 8, experts, "num_experts"),
                    r.sizeSaid("moe_intermediate_size", two ? 1408 : 768), two ? r.size("shared_expert_intermediate_size",
                    5632) : 0, false, false, false));
            int step = r.count("decoder_sparse_step", 1, 1, (int) MAX_LAYERS);
            List<Integer> dense = r.integers("mlp_only_layers", layers);
            bl = new ArrayList<>();
            long ffn = two ? inner : r.size("intermediate_size", 6144);
            for (int i = 0; i < layers; i++) {
                bl.add(!dense.contains(i) && (i + 1) % step == 0 ? Block.moe() : Block.dense(ffn));
            }
        } else {
            bl = new ArrayList<>(java.util.Collections.nCopies(layers, Block.dense(r.size("intermediate_size",
                    11008))));
        }
        boolean[] sliding = slidingLayers(r, type, layers);
        int window = 0;
        for (int i = 0; i < layers; i++) {
            if (sliding[i]) {
                window = window > 0 ? window : r.count("sliding_window", classWindow(type), 1,
                        Integer.MAX_VALUE);
                Block x = bl.get(i);
                bl.set(i, new Block(Block.Mixer.ATTENTION, window, false, x.ffn(), x.ffnSize()));
            }
        }
        return b.blocks(bl).build();
    }

    /**
     * A Llama-layout type's class defaults: heads, layers, hidden size, vocabulary, key/value heads (0: as many as the
     * heads), inner size, head size (0: hidden / heads).
     */
    private record LlamaDefaults(long heads, int layers, long hidden, long vocab, long kvHeads, long inner,
            long headDim) {
    }

    /**
     * The layers that attend within a sliding window: those {@code layer_types} names {@code sliding_attention} (its
     * other entries {@code full_attention}), else where the configuration enables a window ({@link #slidingWindow}),
     * Mistral's and Mixtral's every layer, Qwen's from {@code max_window_layers} on (as Hugging Face's Qwen2 and
     * Qwen3 apply it; 28 unless given) and OLMo 3's three layers of four (its window 4,096 unless given, none where
     * null).
     *
     * @throws InvalidInputException for another layer type, or a sliding layer without {@code sliding_window}
     */
    private static boolean[] slidingLayers(Reader r, String type, int layers) {
        boolean[] out = new boolean[layers];
        if (!WINDOWED_TYPES.contains(type)) {
            // Hugging Face's Llama, OLMo 2, Granite and GLM-4 classes attend fully in every layer: a window key in
            // their configuration (an edit, or one copied from another model) changes nothing there either
            for (String key : List.of("sliding_window", "layer_types")) {
                if (r.has(key) && !r.isNull(key)) {
                    r.say("{}: {} is not read for model_type '{}' (its class attends fully in every layer): every "
                            + "layer is predicted with full attention", r.source(), key, printable(type));
                }
            }
            return out;
        }
        List<String> types = r.texts("layer_types", layers);
        // Hugging Face's Qwen classes drop the window unless use_sliding_window: every layer then attends fully,
        // whatever layer_types says
        boolean windowOff = type.startsWith("qwen") && !r.bool("use_sliding_window", false);
        for (int i = 0; i < types.size(); i++) {
            out[i] = layerType(r, types, i, "", "full_attention", "sliding_attention").equals("sliding_attention")
                    && !windowOff;
            if (out[i] && (!r.has("sliding_window") && classWindow(type) == 0 || r.isNull("sliding_window"))) {
                throw InvalidInputException.inSource(r.source(), "layer_types: layer " + i + " is sliding_attention, "
                        + "but the configuration gives no sliding_window");
            }
        }
        if (types.isEmpty() && slidingWindow(r, type) > 0) {
            int from = type.startsWith("qwen") ? r.count("max_window_layers", 28, 0, (int) MAX_LAYERS) : 0;
            for (int i = from; i < layers; i++) {
                // OLMo 3's class: every fourth layer attends fully
                out[i] = !type.equals("olmo3") || (i + 1) % 4 != 0;
            }
        }
        return out;
    }

    /**
     * Layer {@code i}'s entry of a configuration's {@code layer_types} ({@code dflt} where it has none), one of the two
     * types the architecture has.
     *
     * @throws InvalidInputException naming the layer and the type for any other
     */
    private static String layerType(Reader r, List<String> types, int i, String dflt, String one, String other) {
        String t = types.isEmpty() ? dflt : types.get(i);
        if (!t.equals(one) && !t.equals(other)) {
            throw InvalidInputException.inSource(r.source(), "layer_types: layer " + i + " is '" + printable(t)
                    + "' (expected " + one + " or " + other + ")");
        }
        return t;
    }

    /**
     * Whether two rotary scalings say the same: their type ({@code rope_type}, or the older {@code type}; absent
     * default) and their factor by value (8 and 8.0 alike); other keys ({@code rope_theta}, which transformers' newer
     * {@code rope_parameters} holds) are not compared.
     */
    private static boolean sameScaling(JsonNode a, JsonNode b) {
        java.util.function.Function<JsonNode, String> type = n -> n.path("rope_type").asText(n.path("type")
                .asText("default")).toLowerCase(Locale.ROOT);
        java.util.function.Function<JsonNode, Double> factor = n -> n.path("factor").isNumber()
                ? n.path("factor").asDouble() : 1.0;
        return type.apply(a).equals(type.apply(b)) && factor.apply(a).equals(factor.apply(b));
    }

    /** The window a type's class takes where {@code sliding_window} is absent: 4,096 for Mistral and OLMo 3. */
    private static int classWindow(String type) {
        return type.equals("mistral") || type.equals("olmo3") ? 4096 : 0;
    }

    /**
     * The Llama-layout types whose Hugging Face classes read {@code sliding_window} (and {@code layer_types}): Mistral,
     * Mixtral, Qwen's (with {@code use_sliding_window}), Phi-3 and OLMo 3.
     */
    private static final java.util.Set<String> WINDOWED_TYPES = java.util.Set.of("mistral", "mixtral", "qwen2",
            "qwen3", "qwen2_moe", "qwen3_moe", "phi3", "olmo3");

    /**
     * Mistral's sliding window where the configuration enables it (Qwen's only with {@code use_sliding_window}); where
     * the key is absent, the class's default: 4,096 for Mistral (MistralConfig's, said) and OLMo 3, none for the others.
     */
    private static int slidingWindow(Reader r, String type) {
        if (type.equals("olmo3") && !r.has("sliding_window")) {
            return 4096;
        }
        if (type.equals("mistral") && !r.has("sliding_window") && !r.has("layer_types")) {
            r.say("{}: sliding_window is not given: MistralConfig's default, 4096, is taken (a window in every layer; "
                    + "give \"sliding_window\": null for full attention, as Mistral 7B v0.2 and later state)",
                    r.source());
            return 4096;
        }
        if (!r.has("sliding_window") || r.isNull("sliding_window")) {
            return 0;
        }
        if (type.startsWith("qwen") && !r.bool("use_sliding_window", false)) {
            return 0;
        }
        return r.count("sliding_window", 0, 0, Integer.MAX_VALUE);
    }

    /**
     * Gemma 1, 2 and 3 ({@code gemma3} through its {@code text_config}): gated GELU MLPs, RMS norms, heads of
     * {@code head_dim}, tied embeddings. Gemma 2 and 3 also norm each sub-layer's output and attend within
     * {@code sliding_window} on some layers: Gemma 2 on every other layer from the first, Gemma 3 on all but every
     * {@code sliding_window_pattern}-th (6), or as {@code layer_types} names them. Gemma 3 norms each head's queries
     * and keys. Gemma 2 caps its scores and logits ({@code attn_logit_softcapping}, {@code final_logit_softcapping});
     * capped scores are predicted with an unfused core, as NeMo's Gemma 2 attention and transformers' recommended
     * {@code eager} implementation run them, unless the configuration names its implementation. A key left out takes
     * the Hugging Face class's default. Gemma 4 ({@code gemma4} through its {@code text_config}) is Gemma 3's layout
     * with its full-attention layers of {@code global_head_dim} (512) and, with {@code attention_k_eq_v}, of
     * {@code num_global_key_value_heads} whose keys serve as values; the last layer attends fully; with
     * {@code enable_moe_block} every layer runs its MLP (of {@code intermediate_size}) and {@code num_experts}
     * experts of {@code moe_intermediate_size} ({@code top_k_experts} a token) side by side, each branch with its
     * own norms, the router on a norm of its own with a scale per expert. Its per-layer inputs
     * ({@code hidden_size_per_layer_input}, E2B and E4B) and layers sharing another's keys and values
     * ({@code num_kv_shared_layers}) are refused.
     */
    private static TransformerSpec gemma(Reader r, String name, String type) {
        boolean one = type.equals("gemma");
        boolean four = type.startsWith("gemma4");
        boolean three = type.startsWith("gemma3") || four;
        if (four) {
            // null: none, as transformers tests it for truth
            long perLayer = r.isNull("hidden_size_per_layer_input") ? 0
                    : r.count("hidden_size_per_layer_input", 256, 0, Integer.MAX_VALUE);
            if (perLayer > 0) {
                throw new IllegalArgumentException("hidden_size_per_layer_input " + perLayer + (r.has(
                        "hidden_size_per_layer_input") ? "" : " (the class default where the key is absent)")
                        + ": Gemma 4's per-layer inputs (E2B, E4B) are not supported");
            }
            if (r.count("num_kv_shared_layers", 0, 0, Integer.MAX_VALUE) > 0) {
                throw new IllegalArgumentException("num_kv_shared_layers: layers reusing another layer's keys and "
                        + "values (Gemma 4 E2B, E4B) are not supported");
            }
        }
        int layers = r.layers("num_hidden_layers", one ? 28 : four ? 30 : 26);
        long heads = r.size("num_attention_heads", one ? 16 : 8);
        String actKey = r.has("hidden_activation") && !r.isNull("hidden_activation") ? "hidden_activation"
                : "hidden_act";
        JsonNode bidirectional = r.c().get("use_bidirectional_attention");
        if (bidirectional != null && (bidirectional.isBoolean() && bidirectional.asBoolean()
                || bidirectional.isTextual() && bidirectional.asText().equalsIgnoreCase("all"))) {
            // an embedding model's attention over every position: each core twice the causal one's keys (Gemma 4's
            // "vision" attends bidirectionally within an image's tokens only: the text model stays causal)
            throw new IllegalArgumentException("use_bidirectional_attention " + printable(bidirectional.toString())
                    + ": bidirectional attention (an embedding model's) is not supported: this family is read as a "
                    + "causal decoder");
        }
        TransformerSpec.FfnKind act = activation(r, actKey, "gelu_pytorch_tanh");
        if (act != TransformerSpec.FfnKind.GELU && act != TransformerSpec.FfnKind.SWIGLU) {
            throw new IllegalArgumentException(actKey + " '" + printable(r.text(actKey, "")) + "' is not Gemma's gated "
                    + "MLP's (gelu, gelu_pytorch_tanh, silu)");
        }
        double scoreCap = one ? 0 : r.limit("attn_logit_softcapping", three ? 0 : 50.0);
        double logitCap = one ? 0 : r.limit("final_logit_softcapping", three ? 0 : 30.0);
        boolean bias = r.bool("attention_bias", false);
        long ffn = r.size("intermediate_size", one ? 24576 : 9216);
        long kvHeads = r.size("num_key_value_heads", one ? 16 : 4);
        TransformerSpec.Builder b = TransformerSpec.decoder(name, r.size("hidden_size", one ? 3072 : 2304), heads,
                layers, r.vocab("vocab_size", four ? 262144 : three ? 262208 : 256000)).kvHeads(kvHeads)
                .headDim(r.size("head_dim", 256)).ffn(ffn)
                .ffnKind(act == TransformerSpec.FfnKind.GELU ? TransformerSpec.FfnKind.GATED_GELU
                        : TransformerSpec.FfnKind.SWIGLU)
                .norm(TransformerSpec.Norm.RMS_NORM).bias(false).qkvBias(bias).outBias(bias).mlpBias(false)
                .tiedEmbeddings(r.bool("tie_word_embeddings", true)).qkNorm(three).sandwichNorm(!one)
                .scoreSoftcap(scoreCap > 0).logitSoftcap(logitCap > 0)
                .attentionDropout(r.rate("attention_dropout", 0) > 0).hiddenDropout(false)
                .fusedAttention(scoreCap == 0);
        if (scoreCap > 0 && !r.has("_attn_implementation") && !r.has("attn_implementation")) {
            r.say("{}: attn_logit_softcapping {}: the capped scores are predicted with an unfused attention core "
                    + "(NeMo's Gemma 2 attention, transformers' eager); give \"_attn_implementation\": "
                    + "\"flash_attention_2\" for a fused one", r.source(), scoreCap);
        }
        boolean experts = four && r.bool("enable_moe_block", false);
        if (experts) {
            // the class has no defaults for these: a configuration with experts names them
            int count = r.count("num_experts", -1, 1, TransformerSpec.Moe.MAX_EXPERTS);
            b.moe(new TransformerSpec.Moe(count, r.topK("top_k_experts", -1, count, "num_experts"),
                    r.size("moe_intermediate_size", -1), ffn, false, false, false, 0, true));
        }
        long globalHeadDim = four && !r.isNull("global_head_dim") ? r.count("global_head_dim", 512, 1, 1 << 14) : 0;
        boolean keysAsValues = four && r.bool("attention_k_eq_v", false);
        long globalKv = keysAsValues && r.has("num_global_key_value_heads") && !r.isNull("num_global_key_value_heads")
                ? r.size("num_global_key_value_heads", kvHeads) : 0;
        if (globalKv > 0 && heads % globalKv != 0) {
            throw new IllegalArgumentException("num_global_key_value_heads " + globalKv + " does not divide the "
                    + heads + " attention heads (num_attention_heads)");
        }
        List<Block> bl = new ArrayList<>();
        if (one) {
            bl.addAll(java.util.Collections.nCopies(layers, Block.dense(ffn)));
        } else {
            int window = r.has("sliding_window") && r.isNull("sliding_window") ? 0
                    : r.count("sliding_window", four ? 512 : 4096, 1, Integer.MAX_VALUE);
            String patternKey = r.has("sliding_window_pattern") ? "sliding_window_pattern" : "_sliding_window_pattern";
            // Gemma 4's class keeps 6 whatever the configuration says
            int pattern = four ? 6 : three ? r.count(patternKey, 6, 1, (int) MAX_LAYERS) : 2;
            List<String> types = r.texts("layer_types", layers);
            for (int i = 0; i < layers; i++) {
                // Gemma 2: the even layers slide; Gemma 3: all but every pattern-th; Gemma 4 also attends fully in
                // its last layer
                // a null window without layer_types: every layer attends fully, as for the Llama family
                boolean slidingByDefault = window > 0 && (three ? (i + 1) % pattern != 0 && !(four && i == layers - 1)
                        : i % 2 == 0);
                boolean sliding = layerType(r, types, i, slidingByDefault ? "sliding_attention" : "full_attention",
                        "full_attention", "sliding_attention").equals("sliding_attention");
                if (four && sliding && i == layers - 1) {
                    // Gemma 4's class attends fully in its last layer whatever layer_types says
                    r.say("{}: layer_types: the last layer is sliding_attention; read as full_attention, as "
                            + "transformers' Gemma 4 makes it", r.source());
                    sliding = false;
                }
                if (sliding && window == 0) {
                    throw InvalidInputException.inSource(r.source(), "layer " + i + " is sliding_attention, but the "
                            + "configuration's sliding_window is null");
                }
                Block x = experts ? new Block(Block.Mixer.ATTENTION, sliding ? window : 0, false, Block.Ffn.MOE, 0)
                        : new Block(Block.Mixer.ATTENTION, sliding ? window : 0, false, Block.Ffn.DENSE, ffn);
                bl.add(sliding || !four ? x : x.withAttention(globalHeadDim, globalKv, keysAsValues));
            }
        }
        return b.blocks(bl).build();
    }

    /**
     * StarCoder2: a GELU MLP (not gated), LayerNorms, biases on every projection ({@code use_bias}), grouped
     * key/value heads, every layer within {@code sliding_window} where one is given.
     */
    private static TransformerSpec starcoder2(Reader r, String name) {
        long heads = r.size("num_attention_heads", 24);
        int layers = r.layers("num_hidden_layers", 30);
        boolean bias = r.bool("use_bias", true);
        TransformerSpec.FfnKind act = plainActivation(r, "hidden_act", "gelu_pytorch_tanh");
        long ffn = r.size("intermediate_size", 12288);
        int window = slidingWindow(r, "starcoder2");
        return TransformerSpec.decoder(name, r.size("hidden_size", 3072), heads, layers, r.vocab("vocab_size", 49152))
                .kvHeads(r.size("num_key_value_heads", 2)).ffn(ffn).ffnKind(act).norm(TransformerSpec.Norm.LAYER_NORM)
                .bias(bias).qkvBias(bias).outBias(bias).mlpBias(bias)
                .tiedEmbeddings(r.bool("tie_word_embeddings", true))
                .blocks(java.util.Collections.nCopies(layers, new Block(Block.Mixer.ATTENTION, window, false,
                        Block.Ffn.DENSE, ffn)))
                .attentionDropout(r.rate("attention_dropout", 0) > 0).hiddenDropout(r.rate("residual_dropout", 0) > 0
                        || r.rate("embedding_dropout", 0) > 0).fusedAttention(true).build();
    }

    /**
     * GPT-NeoX (Pythia, GPT-NeoX-20B): LayerNorms and biases, a GELU MLP, rotary positions. Its parallel residual
     * ({@code use_parallel_residual}: attention and MLP both read the layer's input) runs the same layers.
     */
    private static TransformerSpec gptNeox(Reader r, String name) {
        boolean bias = r.bool("attention_bias", true);
        return TransformerSpec.decoder(name, r.size("hidden_size", 6144), r.size("num_attention_heads", 64),
                r.layers("num_hidden_layers", 44), r.vocab("vocab_size", 50432))
                .ffn(r.size("intermediate_size", 24576)).ffnKind(plainActivation(r, "hidden_act", "gelu"))
                .norm(TransformerSpec.Norm.LAYER_NORM).bias(true).qkvBias(bias).outBias(bias).mlpBias(true)
                .tiedEmbeddings(r.bool("tie_word_embeddings", false))
                .attentionDropout(r.rate("attention_dropout", 0) > 0).hiddenDropout(r.rate("hidden_dropout", 0) > 0)
                .fusedAttention(true).build();
    }

    /**
     * DeepSeek's group-limited routing where a configuration gives it ({@code n_group}, {@code topk_group}), checked:
     * the groups divide the routed experts, a token picks at most all the groups, and its experts fit in the groups it
     * picks. It changes no layer's work (a token's experts are still {@code num_experts_per_tok}), but the ranks they
     * lie on, which DeepEP and HybridEP send a token to; {@code {groups, picked}}, {@code {0, 0}} where every group
     * may be picked.
     */
    private static int[] routingGroups(Reader r, int experts, int topK) {
        if (!r.has("n_group") || r.isNull("n_group")) {
            return new int[] {0, 0};
        }
        int groups = r.count("n_group", 1, 1, experts);
        if (experts % groups != 0) {
            throw new IllegalArgumentException("n_group " + groups + " does not divide the " + experts
                    + " routed experts (n_routed_experts)");
        }
        int picked = groups;
        if (r.has("topk_group") && !r.isNull("topk_group")) {
            picked = r.count("topk_group", 1, 1, groups);
            if ((long) picked * (experts / groups) < topK) {
                throw new IllegalArgumentException("num_experts_per_tok " + topK + " routes a token to more experts "
                        + "than its topk_group " + picked + " groups of " + experts / groups + " hold");
            }
        }
        // (every group picked is no limit)
        return picked < groups ? new int[] {groups, picked} : new int[] {0, 0};
    }

    /**
     * DeepSeek-V2/V3's layout and the models that reuse it: Kimi K2 ({@code kimi_k2}, and the text model of
     * {@code kimi_k25}), DeepSeek-V3.2 and GLM-5 with sparse attention ({@code deepseek_v32}, {@code glm_moe_dsa}:
     * {@code index_topk} keys a query chosen by an indexer of {@code index_n_heads} heads of {@code index_head_dim}).
     * A per-layer {@code mlp_layer_types} ("dense" or "sparse") replaces {@code first_k_dense_replace}; layers that
     * reuse another's indexer ({@code indexer_types} "shared", GLM-5.2; {@code index_topk_freq} above 1) are costed
     * with their own, said at each read. A key left out takes the class's default (GLM-5's for {@code glm_moe_dsa},
     * DeepSeek-V3's for the others), the sizes with a warning; a null {@code q_lora_rank} is a plain query projection
     * (DeepSeek-V2-Lite).
     */
    private static TransformerSpec deepseek(Reader r, String name, String type) {
        boolean glm = type.equals("glm_moe_dsa");
        long heads = r.size("num_attention_heads", glm ? 64 : 128);
        int layers = r.layers("num_hidden_layers", glm ? 78 : 61);
        int experts = r.count("n_routed_experts", 256, 1, TransformerSpec.Moe.MAX_EXPERTS);
        long expertFfn = r.size("moe_intermediate_size", 2048);
        int shared = r.count("n_shared_experts", glm ? 1 : 0, 0, TransformerSpec.Moe.MAX_EXPERTS);
        boolean attentionBias = r.bool("attention_bias", false);
        long q = r.has("q_lora_rank") && r.isNull("q_lora_rank") ? 0 : r.size("q_lora_rank", glm ? 2048 : 1536);
        TransformerSpec.Mla mla = new TransformerSpec.Mla(q, r.size("kv_lora_rank", 512),
                r.size("qk_nope_head_dim", glm ? 192 : 128), r.count("qk_rope_head_dim", 64, 0, 1 << 14),
                r.size("v_head_dim", glm ? 256 : 128));
        int firstDense = r.count("first_k_dense_replace", glm ? 3 : 0, 0, layers);
        int freq = r.count("moe_layer_freq", 1, 1, layers);
        long ffn = r.size("intermediate_size", 18432);
        List<String> mlpTypes = r.texts("mlp_layer_types", layers);
        List<Block> bl = new ArrayList<>();
        for (int i = 0; i < layers; i++) {
            boolean moe = i >= firstDense && i % freq == 0;
            if (!mlpTypes.isEmpty()) {
                String t = mlpTypes.get(i);
                if (!t.equals("dense") && !t.equals("sparse")) {
                    throw new IllegalArgumentException("mlp_layer_types[" + i + "] '" + printable(t)
                            + "' is neither dense nor sparse");
                }
                moe = t.equals("sparse");
            }
            bl.add(moe ? Block.moe() : Block.dense(ffn));
        }
        int topK = r.topK("num_experts_per_tok", 8, experts, "n_routed_experts");
        // (checked as given; a model whose layers are all dense routes no token: no groups to keep)
        int[] routing = routingGroups(r, experts, topK);
        if (bl.stream().noneMatch(x -> x.ffn() == Block.Ffn.MOE)) {
            routing = new int[] {0, 0};
        }
        boolean sparse = type.equals("deepseek_v32") || glm || r.has("index_topk") && !r.isNull("index_topk");
        java.util.Optional<TransformerSpec.Dsa> dsa = java.util.Optional.empty();
        if (sparse) {
            dsa = java.util.Optional.of(new TransformerSpec.Dsa(r.count("index_topk", 2048, 1, 1 << 26),
                    r.size("index_n_heads", glm ? 32 : 64), r.size("index_head_dim", 128)));
            List<String> indexers = r.texts("indexer_types", layers);
            for (int i = 0; i < indexers.size(); i++) {
                if (!indexers.get(i).equals("full") && !indexers.get(i).equals("shared")) {
                    throw new IllegalArgumentException("indexer_types[" + i + "] '" + printable(indexers.get(i))
                            + "' is neither full nor shared");
                }
            }
            long reused = indexers.stream().filter(t -> t.equals("shared")).count();
            int every = r.count("index_topk_freq", 1, 1, layers);
            if (reused == 0 && every > 1) {
                reused = layers - (layers + every - 1) / every;
            }
            if (reused > 0) {
                r.say("{}: {} of {} layers reuse another layer's indexer (indexer_types, index_topk_freq); each "
                        + "is costed with its own, a little more than it runs", name, reused, layers);
            }
        }
        TransformerSpec.Builder b = TransformerSpec.decoder(name, r.size("hidden_size", glm ? 6144 : 7168), heads,
                layers, r.vocab("vocab_size", glm ? 154880 : 129280)).kvHeads(heads).headDim(mla.vDim()).ffn(ffn)
                .ffnKind(TransformerSpec.FfnKind.SWIGLU).norm(TransformerSpec.Norm.RMS_NORM).bias(false)
                .qkvBias(attentionBias).outBias(attentionBias).tiedEmbeddings(r.bool("tie_word_embeddings", false))
                .mla(mla).moe(new TransformerSpec.Moe(experts, topK, expertFfn, shared * expertFfn, false,
                        r.text("topk_method", "").equals("noaux_tc"), false))
                .blocks(bl).attentionDropout(r.rate("attention_dropout", 0) > 0).hiddenDropout(false)
                .fusedAttention(true).mtpLayers(r.count("num_nextn_predict_layers", 0, 0, 16))
                .routingGroups(routing[0], routing[1]);
        dsa.ifPresent(b::dsa);
        return b.build();
    }

    /**
     * GLM-4.5 to 4.7 ({@code glm4_moe}): grouped-query attention (its projections' biases with
     * {@code attention_bias}, on the queries, keys and values only; QK norms with {@code use_qk_norm}) and
     * DeepSeek's experts (routed and shared, {@code first_k_dense_replace} dense layers first, the router's score
     * correction), with {@code num_nextn_predict_layers} multi-token-prediction layers. The rotary embedding covers
     * {@code partial_rotary_factor} of each head; its element-wise cost is counted over the whole head.
     */
    private static TransformerSpec glm4Moe(Reader r, String name) {
        long heads = r.size("num_attention_heads", 96);
        int layers = r.layers("num_hidden_layers", 46);
        long hidden = r.size("hidden_size", 4096);
        int experts = r.count("n_routed_experts", 128, 1, TransformerSpec.Moe.MAX_EXPERTS);
        long expertFfn = r.size("moe_intermediate_size", 1408);
        int shared = r.count("n_shared_experts", 1, 0, TransformerSpec.Moe.MAX_EXPERTS);
        int firstDense = r.count("first_k_dense_replace", 1, 0, layers);
        long ffn = r.size("intermediate_size", 10944);
        List<Block> bl = new ArrayList<>();
        for (int i = 0; i < layers; i++) {
            bl.add(i >= firstDense ? Block.moe() : Block.dense(ffn));
        }
        TransformerSpec.Builder b = TransformerSpec.decoder(name, hidden, heads, layers,
                r.vocab("vocab_size", 151552)).kvHeads(r.size("num_key_value_heads", 8)).ffn(ffn)
                .ffnKind(TransformerSpec.FfnKind.SWIGLU).norm(TransformerSpec.Norm.RMS_NORM).bias(false)
                .qkvBias(r.bool("attention_bias", false)).outBias(false).mlpBias(false)
                .tiedEmbeddings(r.bool("tie_word_embeddings", false)).qkNorm(r.bool("use_qk_norm", false))
                .moe(new TransformerSpec.Moe(experts, r.topK("num_experts_per_tok", 8, experts, "n_routed_experts"),
                        expertFfn, shared * expertFfn, false, true, false))
                .blocks(bl).attentionDropout(r.rate("attention_dropout", 0) > 0).hiddenDropout(false)
                .fusedAttention(true).mtpLayers(r.count("num_nextn_predict_layers", 0, 0, 16));
        if (r.has("head_dim") && !r.isNull("head_dim")) {
            b.headDim(r.size("head_dim", -1));
        }
        return b.build();
    }

    private static TransformerSpec gptOss(Reader r, String name) {
        long heads = r.size("num_attention_heads", 64);
        int layers = r.layers("num_hidden_layers", 36);
        String expertsKey = attributeKey(r, "num_local_experts", "num_experts", "GptOssConfig's other name for it");
        int experts = r.count(expertsKey, 128, 1, TransformerSpec.Moe.MAX_EXPERTS);
        int topK = r.topK(attributeKey(r, "num_experts_per_tok", "experts_per_token", "the original checkpoint's "
                + "name for it, which transformers does not read"), 4, experts, expertsKey);
        int window = r.count("sliding_window", 128, 1, Integer.MAX_VALUE);
        List<String> types = r.texts("layer_types", layers);
        List<Block> bl = new ArrayList<>();
        for (int i = 0; i < layers; i++) {
            boolean sliding = layerType(r, types, i, i % 2 == 0 ? "sliding_attention" : "full_attention",
                    "full_attention", "sliding_attention").equals("sliding_attention");
            bl.add(new Block(Block.Mixer.ATTENTION, sliding ? window : 0, false, Block.Ffn.MOE, 0));
        }
        return TransformerSpec.decoder(name, r.size("hidden_size", 2880), heads, layers, r.vocab("vocab_size", 201088))
                .kvHeads(r.size("num_key_value_heads", 8)).headDim(r.size("head_dim", 64))
                .ffn(r.size("intermediate_size", 2880)).ffnKind(r.limit("swiglu_limit", 7.0) > 0
                        ? TransformerSpec.FfnKind.CLAMPED_SWIGLU : TransformerSpec.FfnKind.SWIGLU)
                .norm(TransformerSpec.Norm.RMS_NORM).bias(false).qkvBias(r.bool("attention_bias", true))
                .outBias(r.bool("attention_bias", true)).tiedEmbeddings(r.bool("tie_word_embeddings", false))
                .moe(new TransformerSpec.Moe(experts, topK, r.size("intermediate_size", 2880), 0, true, false, true))
                .blocks(bl).sinks(true).attentionDropout(r.rate("attention_dropout", 0) > 0).hiddenDropout(false)
                .fusedAttention(true).build();
    }

    private static TransformerSpec nemotron(Reader r, String name) {
        long heads = r.size("num_attention_heads", 48);
        TransformerSpec.Builder b = TransformerSpec.decoder(name, r.size("hidden_size", 6144), heads,
                r.layers("num_hidden_layers", 32), r.vocab("vocab_size", 256000))
                .kvHeads(r.size("num_key_value_heads", heads))
                .ffn(r.size("intermediate_size", 24576)).ffnKind(r.has("scaledl_from_log")
                        // a configuration runs writes from a Megatron log takes Nemotron's layout for any decoder with
                        // LayerNorm, its silu Megatron's gated swiglu; Hugging Face's Nemotron MLP has no gate
                        ? activation(r, "hidden_act", "relu2") : plainActivation(r, "hidden_act", "relu2"))
                .norm(TransformerSpec.Norm.LAYER_NORM).bias(false).qkvBias(r.bool("attention_bias", false))
                .outBias(r.bool("attention_bias", false)).mlpBias(r.bool("mlp_bias", false))
                .tiedEmbeddings(r.bool("tie_word_embeddings", false))
                .attentionDropout(r.rate("attention_dropout", 0) > 0).hiddenDropout(false).fusedAttention(true);
        if (r.has("head_dim") && !r.isNull("head_dim")) {
            b.headDim(r.size("head_dim", -1));
        }
        return b.build();
    }

    private static TransformerSpec nemotronH(Reader r, String name) {
        String pattern = r.text("hybrid_override_pattern", "");
        if (pattern.isEmpty()) {
            throw InvalidInputException.inSource(r.source(), "no hybrid_override_pattern (Nemotron-H's layers, one "
                    + "letter a layer: M Mamba, * attention, - MLP, E experts): its class needs it");
        }
        int layers = r.layers("num_hidden_layers", pattern.length());
        if (pattern.length() != layers) {
            throw InvalidInputException.inSource(r.source(), "hybrid_override_pattern has " + pattern.length()
                    + " layers, num_hidden_layers " + layers);
        }
        long heads = r.size("num_attention_heads", 32);
        long ffn = r.has("intermediate_size") ? r.size("intermediate_size", -1) : 1;
        List<Block> bl = new ArrayList<>();
        boolean anyMoe = false;
        for (int i = 0; i < layers; i++) {
            char ch = pattern.charAt(i);
            bl.add(switch (ch) {
                case 'M' -> new Block(Block.Mixer.MAMBA, 0, false, Block.Ffn.NONE, 0);
                case '*' -> new Block(Block.Mixer.ATTENTION, 0, false, Block.Ffn.NONE, 0);
                case '-' -> new Block(Block.Mixer.NONE, 0, false, Block.Ffn.DENSE, ffn);
                case 'E' -> new Block(Block.Mixer.NONE, 0, false, Block.Ffn.MOE, 0);
                default -> throw InvalidInputException.inSource(r.source(), "hybrid_override_pattern: layer " + i
                        + " is '" + printable(String.valueOf(ch)) + "' (expected M, *, - or E)");
            });
            anyMoe |= ch == 'E';
        }
        long headDim = r.has("head_dim") && !r.isNull("head_dim") ? r.size("head_dim", -1)
                : r.size("attention_head_dim", 128);
        long mambaHeads = r.size("mamba_num_heads", 128);
        TransformerSpec.Builder b = TransformerSpec.decoder(name, r.size("hidden_size", 4096), heads, layers,
                r.vocab("vocab_size", 131072)).kvHeads(r.size("num_key_value_heads", 8)).headDim(headDim).ffn(ffn)
                .ffnKind(plainActivation(r, "mlp_hidden_act", "relu2")).norm(TransformerSpec.Norm.RMS_NORM).bias(false)
                .qkvBias(r.bool("attention_bias", false)).outBias(r.bool("attention_bias", false))
                .mlpBias(r.bool("mlp_bias", false)).tiedEmbeddings(r.bool("tie_word_embeddings", false))
                .mamba(new TransformerSpec.Mamba(mambaHeads, r.size("mamba_head_dim", 64),
                        r.size("ssm_state_size", 128), r.size("n_groups", 8), r.count("conv_kernel", 4, 1, 64),
                        r.bool("mamba_proj_bias", r.bool("use_bias", false)), r.bool("use_conv_bias", true),
                        r.count("chunk_size", 128, 1, 1 << 16)))
                .blocks(bl).attentionDropout(r.rate("attention_dropout", 0) > 0).hiddenDropout(false)
                .fusedAttention(true);
        if (anyMoe) {
            int experts = r.count("n_routed_experts", 128, 1, TransformerSpec.Moe.MAX_EXPERTS);
            long shared = r.count("n_shared_experts", 0, 0, TransformerSpec.Moe.MAX_EXPERTS) > 0
                    ? r.size("moe_shared_expert_intermediate_size", -1) : 0;
            b.moe(new TransformerSpec.Moe(experts, r.topK("num_experts_per_tok", 6, experts, "n_routed_experts"),
                    r.size("moe_intermediate_size", -1), shared, false, true, false,
                    r.has("moe_latent_size") && !r.isNull("moe_latent_size") ? r.size("moe_latent_size", -1) : 0));
        }
        return b.build();
    }

    /**
     * Qwen3-Next and Qwen3.5: {@code layer_types} (or every {@code full_attention_interval}-th layer) full attention
     * with an output gate and query/key norms, the others Gated DeltaNet. A DeltaNet layer has the projections of a
     * Mamba-2 mixer (queries and keys as its B and C over {@code linear_num_key_heads} groups, values and the output
     * gate over {@code linear_num_value_heads} heads), the same causal convolution over queries, keys and values, a
     * state of key by value dimension per head and a gated RMS norm, two scalars a head (the decay and the step),
     * and the delta rule's chunked products, in chunks of 64 ({@link TransformerSpec.Mamba#deltaRule()}). Not
     * counted: the delta rule's per-chunk triangular solve; the shared expert's sigmoid gate. Keys a configuration
     * leaves out take its class's defaults ({@code Qwen3NextConfig}, {@code Qwen3_5MoeTextConfig},
     * {@code Qwen3_5TextConfig}); the multi-token-prediction layers ({@code mtp_num_hidden_layers}) are read as
     * DeepSeek-V3's.
     */
    private static TransformerSpec qwenNext(Reader r, String name, String type) {
        boolean next = type.equals("qwen3_next");
        boolean dense = type.equals("qwen3_5") || type.equals("qwen3_5_text");
        int layers = r.layers("num_hidden_layers", next ? 48 : dense ? 32 : 40);
        long heads = r.size("num_attention_heads", 16);
        List<String> types = r.texts("layer_types", layers);
        int interval = types.isEmpty() ? r.countSaid("full_attention_interval", 4, 1, (int) MAX_LAYERS)
                : r.count("full_attention_interval", 4, 1, (int) MAX_LAYERS);
        int experts = dense ? r.count("num_experts", 0, 0, TransformerSpec.Moe.MAX_EXPERTS)
                : r.countSaid("num_experts", next ? 512 : 256, 0, TransformerSpec.Moe.MAX_EXPERTS);
        int step = experts > 0 ? r.count("decoder_sparse_step", 1, 1, (int) MAX_LAYERS) : 1;
        List<Integer> denseLayers = r.integers("mlp_only_layers", layers);
        boolean anyDense = experts == 0 || !denseLayers.isEmpty() || step > 1;
        long ffn = anyDense ? r.sizeSaid("intermediate_size", next ? 5632 : dense ? 12288 : 5632)
                : r.size("intermediate_size", 5632);
        List<Block> bl = new ArrayList<>();
        for (int i = 0; i < layers; i++) {
            String t = layerType(r, types, i, (i + 1) % interval == 0 ? "full_attention" : "linear_attention",
                    "full_attention", "linear_attention");
            boolean moe = experts > 0 && !denseLayers.contains(i) && (i + 1) % step == 0;
            bl.add(new Block(t.equals("full_attention") ? Block.Mixer.ATTENTION : Block.Mixer.MAMBA, 0, false,
                    moe ? Block.Ffn.MOE : Block.Ffn.DENSE, moe ? 0 : ffn));
        }
        long valueHeads = r.sizeSaid("linear_num_value_heads", 32);
        long keyHeads = r.sizeSaid("linear_num_key_heads", 16);
        if (valueHeads % keyHeads != 0) {
            throw InvalidInputException.inSource(r.source(), "linear_num_value_heads (" + valueHeads + ") must be a "
                    + "multiple of linear_num_key_heads (" + keyHeads + "): each key head serves whole value heads");
        }
        boolean attentionBias = r.bool("attention_bias", false);
        TransformerSpec.Builder b = TransformerSpec.decoder(name, r.size("hidden_size", dense ? 4096 : 2048), heads,
                layers, r.vocab("vocab_size", next ? 151936 : 248320))
                .kvHeads(r.size("num_key_value_heads", dense ? 4 : 2))
                .headDim(r.sizeSaid("head_dim", 256)).ffn(ffn).ffnKind(TransformerSpec.FfnKind.SWIGLU)
                .norm(TransformerSpec.Norm.RMS_NORM).bias(false).qkvBias(attentionBias).outBias(attentionBias)
                .tiedEmbeddings(r.bool("tie_word_embeddings", false)).qkNorm(true)
                .outputGate(r.bool("attn_output_gate", true))
                .mamba(new TransformerSpec.Mamba(valueHeads, r.sizeSaid("linear_value_head_dim", 128),
                        r.sizeSaid("linear_key_head_dim", 128), keyHeads, r.count("linear_conv_kernel_dim", 4, 1, 64),
                        false, false, 64, true))
                .blocks(bl).attentionDropout(r.rate("attention_dropout", 0) > 0).hiddenDropout(false)
                .fusedAttention(true).mtpLayers(r.count("mtp_num_hidden_layers", 0, 0, 16));
        if (experts > 0) {
            long shared = r.countSaid("shared_expert_intermediate_size", 512, 0, (int) MAX_SIZE);
            b.moe(new TransformerSpec.Moe(experts, r.topK("num_experts_per_tok", Math.min(next ? 10 : 8, experts),
                    experts, "num_experts"), r.sizeSaid("moe_intermediate_size", 512), shared, false, false, false));
        }
        return b.build();
    }

    private static TransformerSpec llama4(Reader r, String name) {
        long heads = r.size("num_attention_heads", 40);
        int layers = r.layers("num_hidden_layers", 48);
        int experts = r.countSaid("num_local_experts", 16, 1, TransformerSpec.Moe.MAX_EXPERTS);
        long expertFfn = r.size("intermediate_size", 8192);
        int step = r.count("interleave_moe_layer_step", 1, 1, layers);
        List<Integer> moeLayers = r.integers("moe_layers", layers);
        // Llama4TextConfig's default chunk is 8,192 (null: none)
        int chunk = r.isNull("attention_chunk_size") ? 0 : r.countSaid("attention_chunk_size", 8192, 1,
                Integer.MAX_VALUE);
        // (an interval past the layers leaves every layer rotary and chunked, as the class's formula does)
        int interval = r.count("no_rope_layer_interval", 4, 1, (int) MAX_LAYERS);
        List<Integer> noRope = r.integers("no_rope_layers", layers);
        if (!noRope.isEmpty() && (noRope.size() != layers || noRope.stream().anyMatch(x -> x != 0 && x != 1))) {
            throw InvalidInputException.inSource(r.source(), "no_rope_layers: " + noRope.size() + " entries for "
                    + layers + " layers (each 1 for a rotary, chunked layer, 0 for a global one)");
        }
        long dense = r.sizeSaid("intermediate_size_mlp", 16384);
        List<Block> bl = new ArrayList<>();
        for (int i = 0; i < layers; i++) {
            boolean moe = r.has("moe_layers") ? moeLayers.contains(i) : (i + 1) % step == 0;
            // chunked attention in the rotary layers; every fourth layer (no rotary positions) attends globally
            boolean global = noRope.isEmpty() ? (i + 1) % interval == 0 : noRope.get(i) == 0;
            long window = chunk > 0 && !global ? chunk : 0;
            bl.add(new Block(Block.Mixer.ATTENTION, window, window > 0, moe ? Block.Ffn.MOE : Block.Ffn.DENSE,
                    moe ? 0 : dense));
        }
        TransformerSpec.Builder b = TransformerSpec.decoder(name, r.size("hidden_size", 5120), heads, layers,
                r.vocab("vocab_size", 202048)).kvHeads(r.size("num_key_value_heads", 8)).ffn(dense)
                .ffnKind(TransformerSpec.FfnKind.SWIGLU).norm(TransformerSpec.Norm.RMS_NORM).bias(false)
                .qkvBias(r.bool("attention_bias", false)).outBias(r.bool("attention_bias", false))
                .tiedEmbeddings(r.bool("tie_word_embeddings", false))
                .moe(new TransformerSpec.Moe(experts, r.topK("num_experts_per_tok", 1, experts, "num_local_experts"),
                        expertFfn, expertFfn, false, false, false))
                .blocks(bl).attentionDropout(r.rate("attention_dropout", 0) > 0).hiddenDropout(false)
                .fusedAttention(true);
        if (r.has("head_dim") && !r.isNull("head_dim")) {
            b.headDim(r.size("head_dim", -1));
        }
        return b.build();
    }

    private static TransformerSpec opt(Reader r, String name) {
        long h = r.size("hidden_size", 768);
        long proj = r.size("word_embed_proj_dim", h);
        if (proj != h) {
            throw new IllegalArgumentException("word_embed_proj_dim " + proj + " differs from hidden_size " + h
                    + " (OPT-350m's projections are not supported)");
        }
        // OPT's learned positions hold two more rows than max_position_embeddings (its offset)
        return TransformerSpec.decoder(name, h, r.size("num_attention_heads", 12),
                r.layers("num_hidden_layers", 12), r.vocab("vocab_size", 50272))
                .ffn(r.size("ffn_dim", 3072)).maxPositions(r.positions("max_position_embeddings", 2048) + 2)
                .ffnKind(plainActivation(r, "activation_function", "relu"))
                .preNorm(r.bool("do_layer_norm_before", true)).bias(r.bool("enable_bias", true))
                .tiedEmbeddings(r.bool("tie_word_embeddings", true))
                .attentionDropout(r.rate("attention_dropout", 0) > 0).hiddenDropout(r.rate("dropout", 0.1) > 0)
                .build();
    }

    private static TransformerSpec t5(Reader r, String name) {
        long d = r.size("d_model", 512);
        long heads = r.size("num_heads", 8);
        int layers = r.layers("num_layers", 6);
        String ff = r.text("feed_forward_proj", "relu");
        TransformerSpec.FfnKind kind = switch (ff) {
            case "relu" -> TransformerSpec.FfnKind.RELU;
            case "gated-gelu" -> TransformerSpec.FfnKind.GATED_GELU;
            case "gated-silu" -> TransformerSpec.FfnKind.SWIGLU;
            case "gelu" -> TransformerSpec.FfnKind.GELU;
            default -> throw new IllegalArgumentException("feed_forward_proj '" + printable(ff) + "' is not supported "
                    + "(relu, gelu, gated-gelu, gated-silu)");
        };
        boolean dropout = r.rate("dropout_rate", 0.1) > 0;
        return TransformerSpec.decoder(name, d, heads, layers, r.vocab("vocab_size", 32128))
                .decoderLayers(r.layers("num_decoder_layers", layers)).headDim(r.size("d_kv", 64))
                .ffn(r.size("d_ff", 2048)).ffnKind(kind).norm(TransformerSpec.Norm.RMS_NORM).bias(false)
                .relativeBuckets(r.count("relative_attention_num_buckets", 32, 1, 1 << 16))
                .tiedEmbeddings(r.bool("tie_word_embeddings", true)).attentionDropout(dropout)
                .hiddenDropout(dropout).build();
    }

    /** {@link #activation} of an MLP that has no gate: a gated activation's name is refused naming the key. */
    private static TransformerSpec.FfnKind plainActivation(Reader r, String key, String dflt) {
        TransformerSpec.FfnKind kind = activation(r, key, dflt);
        if (kind.gated()) {
            throw new IllegalArgumentException(key + " '" + printable(r.text(key, dflt)) + "': this model type's MLP "
                    + "has no gate (up, activation, down), and silu is read as a gated MLP's: not supported here "
                    + "(gelu, relu, relu2)");
        }
        return kind;
    }

    private static TransformerSpec.FfnKind activation(Reader r, String key, String dflt) {
        String a = r.text(key, dflt).toLowerCase(Locale.ROOT);
        if (a.startsWith("gelu")) {
            return TransformerSpec.FfnKind.GELU;
        }
        if (a.equals("relu")) {
            return TransformerSpec.FfnKind.RELU;
        }
        if (a.equals("relu2") || a.equals("squared-relu") || a.equals("squared_relu")) {
            return TransformerSpec.FfnKind.RELU2;
        }
        if (a.equals("silu") || a.equals("swish")) {
            return TransformerSpec.FfnKind.SWIGLU;
        }
        throw new IllegalArgumentException(key + " '" + printable(a) + "' is not supported (gelu, relu, relu2, silu)");
    }

    /**
     * Logs a warning and keeps it for the specification's {@link TransformerSpec#readNotes()}, once (a key read in two
     * places, a null {@code intermediate_size}, was said twice).
     */
    private static void say(List<String> said, String template, Object... args) {
        String message = org.slf4j.helpers.MessageFormatter.arrayFormat(template, args).getMessage();
        if (said.contains(message)) {
            return;
        }
        LOG.warn("{}", message);
        said.add(message);
    }

    /** Typed, range-checked reads with the file and key in every error; what they assume, said. */
    private record Reader(JsonNode c, String source, List<String> said, java.util.Set<String> seen) {
        Reader(JsonNode c, String source, List<String> said) {
            this(c, source, said, new java.util.HashSet<>());
        }

        /** The key's node (null where absent; JSON's null a null node), the key counted as read. */
        private JsonNode node(String key) {
            seen.add(key);
            return c.get(key);
        }

        /** {@link HuggingFaceConfig#say} into this reading's notes. */
        void say(String template, Object... args) {
            HuggingFaceConfig.say(said, template, args);
        }

        boolean has(String key) {
            return node(key) != null;
        }

        boolean isNull(String key) {
            JsonNode n = node(key);
            return n != null && n.isNull();
        }

        String text(String key, String dflt) {
            JsonNode n = node(key);
            if (n == null || n.isNull()) {
                return dflt;
            }
            if (!n.isTextual()) {
                throw InvalidInputException.inSource(source, key + " must be a string");
            }
            return n.asText();
        }

        /** A hidden, inner or head size: 1..2²². */
        long size(String key, long dflt) {
            return integer(key, dflt, 1, MAX_SIZE);
        }

        /** {@link #size}, its class default said where the key is missing (a size the architecture rests on). */
        long sizeSaid(String key, long dflt) {
            return integer(key, dflt, 1, MAX_SIZE, true);
        }

        /** {@link #count}, its class default said where the key is missing (a count the architecture rests on). */
        int countSaid(String key, long dflt, int min, int max) {
            return (int) integer(key, dflt, min, max, true);
        }

        /**
         * {@link #size} of a key that this model type always needs (the Llama family's feed-forward width, which
         * Mixtral's experts take too): missing, the default is taken with a warning that says {@code whose} it is.
         */
        long sizeSaid(String key, long dflt, String whose) {
            if (!has(key)) {
                say("{}: no {}; {} is taken ({})", source, key, dflt, whose);
            }
            return integer(key, dflt, 1, MAX_SIZE, false);
        }

        /** A layer count: 1..10,000. */
        int layers(String key, long dflt) {
            return (int) integer(key, dflt, 1, MAX_LAYERS);
        }

        /** A vocabulary size: 1..2²⁴. */
        long vocab(String key, long dflt) {
            return integer(key, dflt, 1, MAX_VOCAB);
        }

        /** Learned positions: 1..2²⁶. */
        long positions(String key, long dflt) {
            return integer(key, dflt, 1, 1L << 26);
        }

        /** A count in {@code [min, max]}. */
        int count(String key, long dflt, int min, int max) {
            return (int) integer(key, dflt, min, max);
        }

        /** The experts each token is routed to: at most the {@code experts} of key {@code expertsKey}. */
        int topK(String key, long dflt, int experts, String expertsKey) {
            // (the experts a token is routed to: a size the step rests on, its default said)
            int k = countSaid(key, dflt, 1, TransformerSpec.Moe.MAX_EXPERTS);
            if (k > experts) {
                throw InvalidInputException.inSource(source, key + " = " + k + (has(key) ? "" : " (its default, the "
                        + "key absent)") + " routes each token to more experts than the " + experts + " of "
                        + expertsKey);
            }
            return k;
        }

        /** A probability (dropout rate) in [0, 1]. */
        double rate(String key, double dflt) {
            JsonNode n = node(key);
            if (n == null || n.isNull()) {
                return dflt;
            }
            if (!n.isNumber() || !Double.isFinite(n.asDouble()) || n.asDouble() < 0 || n.asDouble() > 1) {
                throw InvalidInputException.inSource(source, key + " must be a number in [0, 1]: " + clip(n));
            }
            return n.asDouble();
        }

        /** A positive finite number, {@code dflt} when absent, 0 when null (no limit). */
        double limit(String key, double dflt) {
            JsonNode n = node(key);
            if (n == null) {
                return dflt;
            }
            if (n.isNull()) {
                return 0;
            }
            if (!n.isNumber() || !Double.isFinite(n.asDouble()) || n.asDouble() <= 0) {
                throw InvalidInputException.inSource(source, key + " must be a positive number: " + clip(n));
            }
            return n.asDouble();
        }

        /** A list of integers in {@code [0, limit)} (empty when absent). */
        List<Integer> integers(String key, int limit) {
            JsonNode n = node(key);
            List<Integer> out = new ArrayList<>();
            if (n == null || n.isNull()) {
                return out;
            }
            if (!n.isArray() || n.size() > MAX_LAYERS) {
                throw InvalidInputException.inSource(source, key + " must be a list of integers");
            }
            for (JsonNode x : n) {
                if (!x.isIntegralNumber() || !x.canConvertToLong() || x.asLong() < 0 || x.asLong() >= limit
                        && !key.equals("no_rope_layers")) {
                    throw InvalidInputException.inSource(source, key + " must hold integers in 0.." + (limit - 1)
                            + ": " + clip(x));
                }
                out.add((int) Math.min(x.asLong(), Integer.MAX_VALUE));
            }
            return out;
        }

        /** A list of strings, of exactly {@code size} entries when present (empty when absent). */
        List<String> texts(String key, int size) {
            JsonNode n = node(key);
            List<String> out = new ArrayList<>();
            if (n == null || n.isNull()) {
                return out;
            }
            if (!n.isArray() || n.size() != size) {
                throw InvalidInputException.inSource(source, key + " must list " + size + " entries, one per layer");
            }
            for (JsonNode x : n) {
                out.add(x.asText());
            }
            return out;
        }

        private long integer(String key, long dflt, long min, long max) {
            return integer(key, dflt, min, max, ARCHITECTURE_KEYS.contains(key));
        }

        private long integer(String key, long dflt, long min, long max, boolean say) {
            JsonNode n = node(key);
            long v;
            if (n == null || n.isNull()) {
                if (dflt < 0) {
                    throw InvalidInputException.inSource(source, (n == null ? "missing key '" + key + "'"
                            : key + " is null: a number is needed") + (ARCHITECTURE_KEYS.contains(key)
                            ? " (a size the model rests on, read with no default for this type: give it)" : ""));
                }
                if (n != null) {
                    // null where a number is meant (a key whose null means something, num_key_value_heads, is read
                    // apart): the default, said whatever the key, as a number left out by the tool that wrote the file
                    say("{}: {} is null; {} is taken (the default)", source, key, dflt);
                } else if (say) {
                    // Hugging Face's class default, taken as transformers does, but said: a configuration written
                    // by a tool names its sizes, so a missing one is more often a slip than a choice
                    say("{}: no {}; the class default {} is taken, as transformers takes it", source, key, dflt);
                }
                v = dflt;
            } else if (n.isNumber() && !Double.isFinite(n.asDouble())) {
                throw InvalidInputException.inSource(source, key + " is out of range (" + min + ".." + max + "): "
                        + clip(n));
            } else if (!n.isIntegralNumber()) {
                throw InvalidInputException.inSource(source, key + " must be an integer: " + clip(n));
            } else if (!n.canConvertToLong()) {
                throw InvalidInputException.inSource(source, key + " = " + clip(n) + " is out of range (" + min
                        + ".." + max + ")");
            } else {
                v = n.asLong();
            }
            if (v < min || v > max) {
                throw InvalidInputException.inSource(source, key + " = " + v + " is out of range (" + min + ".." + max
                        + ")");
            }
            return v;
        }

        boolean bool(String key, boolean dflt) {
            JsonNode n = node(key);
            if (n == null || n.isNull()) {
                return dflt;
            }
            if (!n.isBoolean()) {
                throw InvalidInputException.inSource(source, key + " must be true or false: " + clip(n));
            }
            return n.asBoolean();
        }

        private static String clip(JsonNode n) {
            if (n.isNumber() && !Double.isFinite(n.asDouble())) {
                // 1e400 is read as infinity, which Jackson would print as the string "Infinity"
                return "a number beyond the range of a double (" + (n.asDouble() > 0 ? "" : "-") + "1.8e308)";
            }
            String t = n.toString();
            return printable(t);
        }
    }
}
