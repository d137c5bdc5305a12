package org.scaledl.transformer;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;
import org.scaledl.InvalidInputException;

/**
 * Reads a Hugging Face {@code config.json} into a {@link TransformerSpec}, without weights or a download. Model types:
 * {@code gpt2}, {@code bert} (and {@code roberta}), {@code llama}, {@code mistral}, {@code mixtral}, {@code qwen2},
 * {@code opt}, {@code t5} (v1.0 and v1.1: {@code feed_forward_proj} {@code relu} or {@code gated-gelu}), and
 * {@code gpt_neox}-free GPT-3-style configurations written in GPT-2's keys. Every size the spec needs is read from the
 * keys those models' configuration classes define, with their documented defaults where a key is absent.
 *
 * <pre>{@code
 * TransformerSpec llama = HuggingFaceConfig.read(Path.of("llama-2-7b/config.json"));
 * }</pre>
 */
public final class HuggingFaceConfig {
    private static final ObjectMapper JSON = new ObjectMapper();
    /** A configuration is a few kilobytes; anything past a megabyte is not one. */
    private static final long MAX_BYTES = 1 << 20;

    private HuggingFaceConfig() {
    }

    /**
     * Reads a configuration file.
     *
     * @throws InvalidInputException naming the file and the key for a missing, unreadable or unsupported
     *         configuration
     */
    public static TransformerSpec read(Path file) {
        byte[] bytes;
        try (InputStream in = Files.newInputStream(file)) {
            bytes = in.readNBytes((int) MAX_BYTES + 1);
        } catch (IOException e) {
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
     * Reads a configuration from bytes.
     *
     * @param source what to call the bytes in errors
     * @param name   the model's name for reports
     * @throws InvalidInputException naming the source and the key
     */
    public static TransformerSpec parse(byte[] bytes, String source, String name) {
        JsonNode c;
        try {
            c = JSON.readTree(bytes);
        } catch (JsonProcessingException e) {
            throw InvalidInputException.invalidJson(source, "not a JSON model configuration", e);
        } catch (IOException e) {
            throw InvalidInputException.inSource(source, "cannot read the model configuration: " + e.getMessage());
        }
        if (c == null || !c.isObject()) {
            throw InvalidInputException.inSource(source, "not a JSON object");
        }
        Reader r = new Reader(c, source);
        String type = r.text("model_type", guessType(c)).toLowerCase(Locale.ROOT);
        try {
            return switch (type) {
                case "gpt2", "gpt3" -> gpt2(r, name);
                case "bert", "roberta" -> bert(r, name, type);
                case "llama", "mistral", "qwen2", "mixtral" -> llama(r, name, type);
                case "opt" -> opt(r, name);
                case "t5" -> t5(r, name);
                default -> throw InvalidInputException.inSource(source, "model_type '" + type + "' is not supported "
                        + "(supported: gpt2, bert, roberta, llama, mistral, mixtral, qwen2, opt, t5)");
            };
        } catch (IllegalArgumentException e) {
            throw InvalidInputException.inSource(source, e.getMessage());
        }
    }

    private static String guessType(JsonNode c) {
        if (c.has("n_embd")) {
            return "gpt2";
        }
        return "";
    }

    private static TransformerSpec gpt2(Reader r, String name) {
        long h = r.positive("n_embd", -1);
        long inner = r.has("n_inner") && !r.isNull("n_inner") ? r.positive("n_inner", -1) : 4 * h;
        return TransformerSpec.decoder(name, h, r.positive("n_head", -1), (int) r.positive("n_layer", -1),
                r.positive("vocab_size", 50257)).maxPositions(r.positive("n_positions", 1024)).ffn(inner)
                .ffnKind(activation(r, "activation_function", "gelu_new")).build();
    }

    private static TransformerSpec bert(Reader r, String name, String type) {
        long maxPositions = r.positive("max_position_embeddings", 512);
        return TransformerSpec.encoder(name, r.positive("hidden_size", 768), r.positive("num_attention_heads", 12),
                (int) r.positive("num_hidden_layers", 12), r.positive("vocab_size", type.equals("bert") ? 30522
                        : 50265))
                .ffn(r.positive("intermediate_size", 3072)).maxPositions(maxPositions)
                .typeVocab(r.nonNegative("type_vocab_size", 2)).ffnKind(activation(r, "hidden_act", "gelu")).build();
    }

    private static TransformerSpec llama(Reader r, String name, String type) {
        long heads = r.positive("num_attention_heads", 32);
        TransformerSpec.Builder b = TransformerSpec.decoder(name, r.positive("hidden_size", 4096), heads,
                (int) r.positive("num_hidden_layers", 32), r.positive("vocab_size", 32000))
                .kvHeads(r.has("num_key_value_heads") && !r.isNull("num_key_value_heads")
                        ? r.positive("num_key_value_heads", heads) : heads)
                .ffn(r.positive("intermediate_size", 11008)).ffnKind(TransformerSpec.FfnKind.SWIGLU)
                .norm(TransformerSpec.Norm.RMS_NORM).bias(r.bool("attention_bias", false))
                .tiedEmbeddings(r.bool("tie_word_embeddings", false));
        if (r.has("head_dim") && !r.isNull("head_dim")) {
            b.headDim(r.positive("head_dim", -1));
        }
        if (type.equals("mixtral")) {
            b.experts((int) r.positive("num_local_experts", 8), (int) r.positive("num_experts_per_tok", 2));
        }
        return b.build();
    }

    private static TransformerSpec opt(Reader r, String name) {
        long h = r.positive("hidden_size", 768);
        long proj = r.positive("word_embed_proj_dim", h);
        if (proj != h) {
            throw new IllegalArgumentException("word_embed_proj_dim " + proj + " differs from hidden_size " + h
                    + " (OPT-350m's projections are not supported)");
        }
        // OPT's learned positions hold two more rows than max_position_embeddings (its offset)
        return TransformerSpec.decoder(name, h, r.positive("num_attention_heads", 12),
                (int) r.positive("num_hidden_layers", 12), r.positive("vocab_size", 50272))
                .ffn(r.positive("ffn_dim", 3072)).maxPositions(r.positive("max_position_embeddings", 2048) + 2)
                .ffnKind(activation(r, "activation_function", "relu"))
                .preNorm(r.bool("do_layer_norm_before", true)).bias(r.bool("enable_bias", true))
                .tiedEmbeddings(r.bool("tie_word_embeddings", true)).build();
    }

    private static TransformerSpec t5(Reader r, String name) {
        long d = r.positive("d_model", 512);
        long heads = r.positive("num_heads", 8);
        int layers = (int) r.positive("num_layers", 6);
        String ff = r.text("feed_forward_proj", "relu");
        TransformerSpec.FfnKind kind = switch (ff) {
            case "relu" -> TransformerSpec.FfnKind.RELU;
            case "gated-gelu" -> TransformerSpec.FfnKind.GATED_GELU;
            case "gated-silu" -> TransformerSpec.FfnKind.SWIGLU;
            case "gelu" -> TransformerSpec.FfnKind.GELU;
            default -> throw new IllegalArgumentException("feed_forward_proj '" + ff + "' is not supported");
        };
        return TransformerSpec.decoder(name, d, heads, layers, r.positive("vocab_size", 32128))
                .decoderLayers((int) r.positive("num_decoder_layers", layers)).headDim(r.positive("d_kv", 64))
                .ffn(r.positive("d_ff", 2048)).ffnKind(kind).norm(TransformerSpec.Norm.RMS_NORM).bias(false)
                .relativeBuckets((int) r.positive("relative_attention_num_buckets", 32))
                .tiedEmbeddings(r.bool("tie_word_embeddings", true)).build();
    }

    private static TransformerSpec.FfnKind activation(Reader r, String key, String dflt) {
        String a = r.text(key, dflt).toLowerCase(Locale.ROOT);
        if (a.startsWith("gelu")) {
            return TransformerSpec.FfnKind.GELU;
        }
        if (a.equals("relu")) {
            return TransformerSpec.FfnKind.RELU;
        }
        if (a.equals("silu") || a.equals("swish")) {
            return TransformerSpec.FfnKind.SWIGLU;
        }
        throw new IllegalArgumentException(key + " '" + a + "' is not supported (gelu, relu, silu)");
    }

    /** Typed reads with the file and key in every error. */
    private record Reader(JsonNode c, String source) {
        boolean has(String key) {
            return c.has(key);
        }

        boolean isNull(String key) {
            return c.path(key).isNull();
        }

        String text(String key, String dflt) {
            JsonNode n = c.get(key);
            return n == null || n.isNull() ? dflt : n.asText();
        }

        long positive(String key, long dflt) {
            long v = integer(key, dflt);
            if (v <= 0) {
                throw InvalidInputException.inSource(source, key + " must be positive: " + v);
            }
            return v;
        }

        long nonNegative(String key, long dflt) {
            long v = integer(key, dflt);
            if (v < 0) {
                throw InvalidInputException.inSource(source, key + " must be >= 0: " + v);
            }
            return v;
        }

        private long integer(String key, long dflt) {
            JsonNode n = c.get(key);
            if (n == null || n.isNull()) {
                if (dflt < 0) {
                    throw InvalidInputException.inSource(source, "missing key '" + key + "'");
                }
                return dflt;
            }
            if (!n.isIntegralNumber() || !n.canConvertToLong()) {
                throw InvalidInputException.inSource(source, key + " must be an integer: " + n);
            }
            return n.asLong();
        }

        boolean bool(String key, boolean dflt) {
            JsonNode n = c.get(key);
            if (n == null || n.isNull()) {
                return dflt;
            }
            if (!n.isBoolean()) {
                throw InvalidInputException.inSource(source, key + " must be true or false: " + n);
            }
            return n.asBoolean();
        }
    }
}
