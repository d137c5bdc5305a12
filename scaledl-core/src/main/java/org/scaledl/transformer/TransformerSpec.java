package org.scaledl.transformer;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import org.scaledl.Checks;
import org.scaledl.graph.Attribute;
import org.scaledl.graph.Blocks;
import org.scaledl.graph.DataType;
import org.scaledl.graph.Dim;
import org.scaledl.graph.Layer;
import org.scaledl.graph.LayerRole;
import org.scaledl.graph.ModelGraph;
import org.scaledl.graph.SymbolicShape;
import org.scaledl.graph.TensorInfo;
import org.scaledl.graph.TensorRole;
import org.scaledl.graph.TransformerShape;

/**
 * A transformer described by its configuration: the architecture (decoder-only, encoder-only, encoder–decoder),
 * hidden size, attention heads and key/value heads (grouped-query and multi-query attention), layers, feed-forward
 * size and kind (GELU/ReLU, or gated SwiGLU / gated GELU), vocabulary, positions (learned, rotary, relative), norm
 * (LayerNorm or RMSNorm), biases, tied embeddings and mixture-of-experts routing. {@link #graph(long)} builds its
 * layer graph for a sequence length in the vocabulary of an ONNX import ({@code Gemm}, {@code MatMul},
 * {@code LayerNormalization}, {@code Softmax}, {@code Gelu}, {@code Gather} of an embedding...), so the same layer
 * cost model predicts both; the graph holds each distinct block once ({@link ModelGraph#repeats}), so a 96-layer model
 * costs one layer's analysis.
 *
 * <pre>{@code
 * TransformerSpec gpt3 = TransformerSpec.decoder("gpt3-175b", 12288, 96, 96, 50257).maxPositions(2048).build();
 * TransformerSpec llama = HuggingFaceConfig.read(Path.of("config.json"));
 * ModelGraph g = gpt3.graph(2048);            // batch symbolic: sequences per micro-batch
 * long params = gpt3.parameterCount();        // 175,181,291,520
 * }</pre>
 *
 * <p>Parameter counts are exact for the architectures of Hugging Face's {@code GPT2LMHeadModel},
 * {@code LlamaForCausalLM}, {@code MistralForCausalLM}, {@code MixtralForCausalLM}, {@code OPTForCausalLM},
 * {@code BertForMaskedLM} and {@code T5ForConditionalGeneration}; the contractions' FLOPs are those of the closed
 * forms (Narayanan et al., SC '21, Eq. 3: {@code 24·B·s·h² + 4·B·s²·h} per layer forward, {@code 2·B·s·h·V} for the
 * logits).
 *
 * @param name           a name for reports
 * @param architecture   decoder-only, encoder-only or encoder–decoder
 * @param hidden         hidden size {@code h}
 * @param heads          attention heads
 * @param kvHeads        key/value heads (= heads without GQA; 1 for MQA)
 * @param headDim        size of one head (usually hidden / heads)
 * @param ffn            feed-forward inner size
 * @param ffnKind        plain (one up projection and an activation) or gated (SwiGLU, gated GELU)
 * @param layers         layers of the (encoder) stack
 * @param decoderLayers  decoder layers of an encoder–decoder model (0 otherwise)
 * @param vocab          vocabulary size
 * @param maxPositions   learned position embeddings (0 for rotary or relative positions)
 * @param typeVocab      token-type embeddings (BERT's segments; 0 without)
 * @param relativeBuckets buckets of T5's relative attention bias (0 without)
 * @param norm           LayerNorm (scale and bias) or RMSNorm (scale only)
 * @param preNorm        norm before each sub-layer (GPT-2, Llama) rather than after the residual add (BERT)
 * @param bias           biases on the projections
 * @param tiedEmbeddings the output projection shares the input embedding's weight
 * @param experts        experts of a mixture-of-experts feed-forward (1: dense)
 * @param topK           experts each token goes to
 */
public record TransformerSpec(String name, Architecture architecture, long hidden, long heads, long kvHeads,
        long headDim, long ffn, FfnKind ffnKind, int layers, int decoderLayers, long vocab, long maxPositions,
        long typeVocab, int relativeBuckets, Norm norm, boolean preNorm, boolean bias, boolean tiedEmbeddings,
        int experts, int topK) {

    /** Which stacks the model has. */
    public enum Architecture {
        /** GPT-style causal decoder. */
        DECODER,
        /** BERT-style bidirectional encoder with a masked-language-model head. */
        ENCODER,
        /** T5-style encoder and decoder with cross-attention. */
        ENCODER_DECODER
    }

    /** The feed-forward block. */
    public enum FfnKind {
        /** {@code act(x·W1 + b1)·W2 + b2} with GELU. */
        GELU,
        /** {@code act(x·W1 + b1)·W2 + b2} with ReLU. */
        RELU,
        /** {@code (silu(x·Wg) ⊙ x·Wu)·Wd} (Llama, Mistral). */
        SWIGLU,
        /** {@code (gelu(x·Wg) ⊙ x·Wu)·Wd} (T5 v1.1). */
        GATED_GELU;

        /** Whether the block has a gate projection beside the up projection. */
        public boolean gated() {
            return this == SWIGLU || this == GATED_GELU;
        }
    }

    /** The normalisation layers. */
    public enum Norm {
        /** LayerNorm with scale and bias. */
        LAYER_NORM,
        /** RMSNorm: scale only. */
        RMS_NORM
    }

    /** Validates. */
    public TransformerSpec {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(architecture, "architecture");
        Objects.requireNonNull(ffnKind, "ffnKind");
        Objects.requireNonNull(norm, "norm");
        Checks.argument(hidden > 0 && heads > 0 && kvHeads > 0 && headDim > 0 && ffn > 0 && layers > 0 && vocab > 0,
                "%s: hidden size, heads, key/value heads, head size, feed-forward size, layers and vocabulary must "
                        + "be positive", name);
        Checks.argument(heads % kvHeads == 0, "%s: heads (%s) must be a multiple of key/value heads (%s)", name,
                heads, kvHeads);
        Checks.argument(maxPositions >= 0 && typeVocab >= 0 && relativeBuckets >= 0 && decoderLayers >= 0,
                "%s: position, type and bucket counts must be >= 0", name);
        Checks.argument((architecture == Architecture.ENCODER_DECODER) == (decoderLayers > 0),
                "%s: only an encoder-decoder model has decoder layers", name);
        Checks.argument(experts >= 1 && topK >= 1 && topK <= experts, "%s: top-%s of %s experts", name, topK,
                experts);
        Checks.argument(hidden <= 1L << 20 && ffn <= 1L << 22 && layers + decoderLayers <= 10_000
                && vocab <= 1L << 24 && heads <= 1L << 14, "%s: sizes beyond any model (hidden %s, ffn %s, layers %s, "
                        + "vocabulary %s, heads %s)", name, hidden, ffn, layers, vocab, heads);
    }

    /**
     * Starts a GPT-style decoder: pre-LayerNorm, GELU feed-forward of 4·hidden, biases, tied embeddings, learned
     * positions (set {@link Builder#maxPositions}), heads of {@code hidden / heads}.
     */
    public static Builder decoder(String name, long hidden, long heads, int layers, long vocab) {
        return new Builder(name, Architecture.DECODER, hidden, heads, layers, vocab);
    }

    /** Starts a BERT-style encoder: post-LayerNorm, GELU, biases, tied MLM decoder, learned positions. */
    public static Builder encoder(String name, long hidden, long heads, int layers, long vocab) {
        return new Builder(name, Architecture.ENCODER, hidden, heads, layers, vocab).preNorm(false);
    }

    /** Layers of all stacks. */
    public int totalLayers() {
        return layers + decoderLayers;
    }

    /** Trainable parameters, exactly (every copy of every block; a tied weight once). */
    public long parameterCount() {
        return graph(Math.max(1, Math.min(8, maxPositions == 0 ? 8 : maxPositions))).parameterCount();
    }

    /** The shape the execution and memory models read. */
    public TransformerShape shape(long seq) {
        return new TransformerShape(hidden, heads, kvHeads, ffn, totalLayers(), vocab, seq, experts, topK);
    }

    /**
     * The layer graph for a sequence length, batch symbolic (sequences per micro-batch): embeddings, each distinct
     * block once with {@link ModelGraph#repeats} its layer count, the output projection and the loss. Layers of the
     * attention core are named {@code .../attn/core/...} (what selective recomputation recomputes).
     *
     * @throws IllegalArgumentException for a sequence longer than the learned positions or not positive
     */
    public ModelGraph graph(long seq) {
        Checks.argument(seq > 0, "sequence length must be positive: %s", seq);
        Checks.argument(maxPositions == 0 || seq <= maxPositions, "%s: sequence %s is longer than its %s learned "
                + "positions", name, seq, maxPositions);
        return new GraphWriter(this, seq).build();
    }

    /** Builds a {@link TransformerSpec}; sizes not set take the common defaults named on each setter. */
    public static final class Builder {
        private final String name;
        private final Architecture architecture;
        private final long hidden;
        private final long heads;
        private final int layers;
        private final long vocab;
        private long kvHeads;
        private long headDim;
        private long ffn;
        private FfnKind ffnKind = FfnKind.GELU;
        private int decoderLayers;
        private long maxPositions;
        private long typeVocab;
        private int relativeBuckets;
        private Norm norm = Norm.LAYER_NORM;
        private boolean preNorm = true;
        private boolean bias = true;
        private boolean tied = true;
        private int experts = 1;
        private int topK = 1;

        Builder(String name, Architecture architecture, long hidden, long heads, int layers, long vocab) {
            this.name = Objects.requireNonNull(name);
            this.architecture = architecture;
            this.hidden = hidden;
            this.heads = heads;
            this.layers = layers;
            this.vocab = vocab;
        }

        /** Key/value heads (default: the heads; 1 for multi-query attention). */
        public Builder kvHeads(long value) {
            this.kvHeads = value;
            return this;
        }

        /** The size of one head (default hidden / heads). */
        public Builder headDim(long value) {
            this.headDim = value;
            return this;
        }

        /** The feed-forward inner size (default 4 · hidden). */
        public Builder ffn(long value) {
            this.ffn = value;
            return this;
        }

        /** The feed-forward kind (default GELU). */
        public Builder ffnKind(FfnKind value) {
            this.ffnKind = Objects.requireNonNull(value);
            return this;
        }

        /** Decoder layers: makes the model an encoder–decoder. */
        public Builder decoderLayers(int value) {
            this.decoderLayers = value;
            return this;
        }

        /** Learned position embeddings (default 0: rotary or relative positions). */
        public Builder maxPositions(long value) {
            this.maxPositions = value;
            return this;
        }

        /** Token-type embeddings (BERT's 2; default 0). */
        public Builder typeVocab(long value) {
            this.typeVocab = value;
            return this;
        }

        /** Buckets of a relative attention bias (T5's 32; default 0). */
        public Builder relativeBuckets(int value) {
            this.relativeBuckets = value;
            return this;
        }

        /** The norm (default LayerNorm). */
        public Builder norm(Norm value) {
            this.norm = Objects.requireNonNull(value);
            return this;
        }

        /** Norm before each sub-layer (default true; false: after the residual add, as BERT). */
        public Builder preNorm(boolean value) {
            this.preNorm = value;
            return this;
        }

        /** Biases on the projections (default true). */
        public Builder bias(boolean value) {
            this.bias = value;
            return this;
        }

        /** Output projection tied to the input embedding (default true). */
        public Builder tiedEmbeddings(boolean value) {
            this.tied = value;
            return this;
        }

        /** A mixture-of-experts feed-forward: {@code experts} experts, each token routed to {@code topK}. */
        public Builder experts(int count, int k) {
            this.experts = count;
            this.topK = k;
            return this;
        }

        /**
         * The specification.
         *
         * @throws IllegalArgumentException naming the model and the size that is out of range
         */
        public TransformerSpec build() {
            Checks.argument(heads > 0 && hidden > 0, "%s: hidden size and heads must be positive", name);
            long hd = headDim > 0 ? headDim : hidden / heads;
            Checks.argument(headDim > 0 || hidden % heads == 0, "%s: hidden size %s is not a multiple of %s heads; "
                    + "give the head size", name, hidden, heads);
            return new TransformerSpec(name, decoderLayers > 0 ? Architecture.ENCODER_DECODER : architecture, hidden,
                    heads, kvHeads > 0 ? kvHeads : heads, hd, ffn > 0 ? ffn : 4 * hidden, ffnKind, layers,
                    decoderLayers, vocab, maxPositions, typeVocab, relativeBuckets, norm, preNorm, bias, tied,
                    experts, topK);
        }
    }

    @Override
    public String toString() {
        return String.format(Locale.ROOT, "%s (%s, h=%d, heads=%d/%d, layers=%d%s, ffn=%d %s, vocab=%d%s)", name,
                architecture.name().toLowerCase(Locale.ROOT), hidden, heads, kvHeads, layers,
                decoderLayers > 0 ? "+" + decoderLayers : "", ffn, ffnKind.name().toLowerCase(Locale.ROOT), vocab,
                experts > 1 ? ", " + experts + " experts top-" + topK : "");
    }

    /** Writes the graph of a spec at one sequence length. */
    private static final class GraphWriter {
        private final TransformerSpec m;
        private final long s;
        private final ModelGraph.Builder g;
        /** The block kind of each transformer layer, in order. */
        private final List<Integer> pattern = new ArrayList<>();
        private LayerRole.Region region = LayerRole.Region.PROLOGUE;
        /** The kind of block being written, or -1 outside the blocks. */
        private int block = -1;

        GraphWriter(TransformerSpec m, long s) {
            this.m = m;
            this.s = s;
            this.g = ModelGraph.builder(m.name + "_s" + s);
        }

        /** {@code [batch·s, n]}: token rows. */
        private SymbolicShape rows(long n) {
            return SymbolicShape.of(new Dim(s, 0), Dim.of(n));
        }

        /** {@code [batch, heads, s, n]}: per-head activations. */
        private SymbolicShape perHead(long heads, long rowsPerHead, long n) {
            return SymbolicShape.of(Dim.batch(), Dim.of(heads), Dim.of(rowsPerHead), Dim.of(n));
        }

        private String act(String name, SymbolicShape shape) {
            g.tensor(TensorInfo.of(name, DataType.FLOAT, shape, TensorRole.ACTIVATION));
            return name;
        }

        private String param(String name, long... dims) {
            g.tensor(TensorInfo.of(name, DataType.FLOAT, SymbolicShape.ofStatic(dims), TensorRole.PARAMETER));
            return name;
        }

        private void layer(Layer.Builder l, String name, LayerRole.Kind kind) {
            g.layer(l.build());
            g.role(name, new LayerRole(region, kind, block));
        }

        private String op(String name, LayerRole.Kind kind, String type, SymbolicShape out, String... inputs) {
            String y = act(name + ":0", out);
            layer(Layer.builder(name, type).inputs(inputs).outputs(y), name, kind);
            return y;
        }

        /** {@code x[rows, in] · W[in, out] (+ b)}. */
        private String linear(String name, LayerRole.Kind kind, String x, long in, long out, boolean withBias) {
            String w = param(name + ".weight", in, out);
            String y = act(name + ":0", rows(out));
            Layer.Builder l = Layer.builder(name, "Gemm").outputs(y);
            if (withBias) {
                l.inputs(x, w, param(name + ".bias", out));
            } else {
                l.inputs(x, w);
            }
            layer(l, name, kind);
            return y;
        }

        private String norm(String name, String x) {
            String y = act(name + ":0", rows(m.hidden));
            List<String> in = new ArrayList<>(List.of(x, param(name + ".weight", m.hidden)));
            if (m.norm == Norm.LAYER_NORM) {
                in.add(param(name + ".bias", m.hidden));
            }
            layer(Layer.builder(name, "LayerNormalization").inputs(in).outputs(y)
                    .attribute("axis", Attribute.ofInt(-1)), name, LayerRole.Kind.NORM);
            return y;
        }

        ModelGraph build() {
            g.tensor(TensorInfo.of("input_ids", DataType.INT64, SymbolicShape.of(Dim.batch(), Dim.of(s)),
                    TensorRole.INPUT));
            String wte = param("embed.tokens.weight", m.vocab, m.hidden);
            String x = op("embed/tokens", LayerRole.Kind.EMBEDDING, "Gather", rows(m.hidden), wte, "input_ids");
            x = embeddings("embed", x);
            String encoderOut = null;
            if (m.architecture == Architecture.ENCODER_DECODER) {
                encoderOut = stack("enc", x, m.layers, false, null);
                region = LayerRole.Region.PROLOGUE;
                String y = op("dec/embed/tokens", LayerRole.Kind.EMBEDDING, "Gather", rows(m.hidden), wte,
                        "input_ids");
                x = stack("dec", y, m.decoderLayers, true, encoderOut);
            } else {
                x = stack("layers", x, m.layers, m.architecture == Architecture.DECODER, null);
            }
            region = LayerRole.Region.EPILOGUE;
            block = -1;
            if (m.preNorm && m.architecture == Architecture.DECODER) {
                x = norm("head/norm", x);
            }
            if (m.architecture == Architecture.ENCODER) {
                // the masked-language-model head's transform
                x = linear("head/transform", LayerRole.Kind.HEAD, x, m.hidden, m.hidden, true);
                x = op("head/transform/act", LayerRole.Kind.OTHER, "Gelu", rows(m.hidden), x);
                x = norm("head/transform/norm", x);
            }
            String logits = act("head/logits:0", rows(m.vocab));
            Layer.Builder head = Layer.builder("head/logits", "Gemm").outputs(logits);
            String w = m.tiedEmbeddings ? wte : param("head.weight", m.vocab, m.hidden);
            if (m.architecture == Architecture.ENCODER) {
                head.inputs(x, w, param("head.bias", m.vocab));
            } else {
                head.inputs(x, w);
            }
            layer(head.attribute("transB", Attribute.ofInt(1)), "head/logits", LayerRole.Kind.HEAD);
            String loss = op("head/loss/log_softmax", LayerRole.Kind.LOSS, "LogSoftmax", rows(m.vocab), logits);
            g.tensor(TensorInfo.of("labels", DataType.INT64, SymbolicShape.of(Dim.batch(), Dim.of(s)),
                    TensorRole.INPUT));
            String picked = act("head/loss:0", SymbolicShape.of(Dim.batch(), Dim.of(s)));
            layer(Layer.builder("head/loss", "GatherElements").inputs(loss, "labels").outputs(picked), "head/loss",
                    LayerRole.Kind.LOSS);
            g.output(picked);
            Blocks blocks = new Blocks(m.hidden, pattern, true);
            return g.blocks(blocks).transformer(m.shape(s)).build();
        }

        private String embeddings(String prefix, String x) {
            if (m.maxPositions > 0) {
                g.tensor(TensorInfo.of(prefix + ".position_ids", DataType.INT64, SymbolicShape.ofStatic(s),
                        TensorRole.CONSTANT));
                String wpe = param(prefix + ".positions.weight", m.maxPositions, m.hidden);
                String p = op(prefix + "/positions", LayerRole.Kind.POSITION, "Gather",
                        SymbolicShape.ofStatic(s, m.hidden), wpe, prefix + ".position_ids");
                x = op(prefix + "/add_positions", LayerRole.Kind.POSITION, "Add", rows(m.hidden), x, p);
            }
            if (m.typeVocab > 0) {
                g.tensor(TensorInfo.of(prefix + ".token_type_ids", DataType.INT64,
                        SymbolicShape.of(Dim.batch(), Dim.of(s)), TensorRole.INPUT));
                String wtt = param(prefix + ".token_types.weight", m.typeVocab, m.hidden);
                String t = op(prefix + "/token_types", LayerRole.Kind.EMBEDDING, "Gather", rows(m.hidden), wtt,
                        prefix + ".token_type_ids");
                x = op(prefix + "/add_token_types", LayerRole.Kind.EMBEDDING, "Add", rows(m.hidden), x, t);
            }
            if (!m.preNorm) {
                x = norm(prefix + "/norm", x);
            }
            return op(prefix + "/dropout", LayerRole.Kind.DROPOUT, "Dropout", rows(m.hidden), x);
        }

        /** One block written once, standing for {@code count} layers. */
        private String stack(String prefix, String x, int count, boolean causal, String memory) {
            String relative = null;
            if (m.relativeBuckets > 0) {
                // one relative-position bias table per stack, shared by its layers (T5)
                String table = param(prefix + ".relative_bias.weight", m.relativeBuckets, m.heads);
                g.tensor(TensorInfo.of(prefix + ".buckets", DataType.INT64, SymbolicShape.ofStatic(s, s),
                        TensorRole.CONSTANT));
                relative = op(prefix + "/relative_bias", LayerRole.Kind.EMBEDDING, "Gather",
                        SymbolicShape.ofStatic(s, s, m.heads), table, prefix + ".buckets");
            }
            region = LayerRole.Region.BLOCK;
            block = pattern.isEmpty() ? 0 : pattern.get(pattern.size() - 1) + 1;
            for (int i = 0; i < count; i++) {
                pattern.add(block);
            }
            String b = prefix + "/block";
            x = attention(b + "/attn", x, null, relative);
            if (memory != null) {
                x = attention(b + "/cross", x, memory, null);
            }
            x = feedForward(b + "/ffn", x);
            region = LayerRole.Region.EPILOGUE;
            block = -1;
            if (m.architecture == Architecture.ENCODER_DECODER && m.preNorm) {
                x = norm(prefix + "/final_norm", x);
            }
            return x;
        }

        /**
         * Attention sub-layer with its norm and residual add: self-attention ({@code memory} null) or cross-attention
         * over an encoder's output; {@code relative} the stack's position bias, if any.
         */
        private String attention(String p, String x, String memory, String relative) {
            String in = m.preNorm ? norm(p + "/norm", x) : x;
            long q = m.heads * m.headDim;
            long kv = m.kvHeads * m.headDim;
            String c = p + "/core";
            Layer.Builder split = Layer.builder(c + "/split", "Split").outputs(c + "/q:0", c + "/kT:0", c + "/v:0");
            if (memory == null) {
                String qkv = linear(p + "/qkv", LayerRole.Kind.QKV, in, m.hidden, q + 2 * kv, m.bias);
                if (m.maxPositions == 0 && m.relativeBuckets == 0) {
                    // rotary embeddings of queries and keys: element-wise rotations
                    qkv = op(p + "/rope", LayerRole.Kind.QKV, "Mul", rows(q + 2 * kv), qkv, qkv);
                }
                split.inputs(qkv);
            } else {
                split.inputs(linear(p + "/q", LayerRole.Kind.QKV, in, m.hidden, q, m.bias), linear(p + "/kv",
                        LayerRole.Kind.QKV, memory, m.hidden, 2 * kv, m.bias));
            }
            act(c + "/q:0", perHead(m.heads, s, m.headDim));
            act(c + "/kT:0", perHead(m.heads, m.headDim, s));
            act(c + "/v:0", perHead(m.heads, s, m.headDim));
            LayerRole.Kind core = LayerRole.Kind.ATTENTION_CORE;
            layer(split, c + "/split", core);
            String scores = op(c + "/scores", core, "MatMul", perHead(m.heads, s, s), c + "/q:0", c + "/kT:0");
            if (relative != null) {
                scores = op(c + "/add_bias", core, "Add", perHead(m.heads, s, s), scores, relative);
            }
            String probs = op(c + "/softmax", core, "Softmax", perHead(m.heads, s, s), scores);
            probs = op(c + "/dropout", core, "Dropout", perHead(m.heads, s, s), probs);
            String ctx = op(c + "/context", core, "MatMul", perHead(m.heads, s, m.headDim), probs, c + "/v:0");
            String merged = op(p + "/merge_heads", LayerRole.Kind.ATTENTION_OUT, "Transpose", rows(q), ctx);
            String out = linear(p + "/out", LayerRole.Kind.ATTENTION_OUT, merged, q, m.hidden, m.bias);
            out = op(p + "/dropout", LayerRole.Kind.DROPOUT, "Dropout", rows(m.hidden), out);
            String y = op(p + "/residual", LayerRole.Kind.RESIDUAL, "Add", rows(m.hidden), x, out);
            return m.preNorm ? y : norm(p + "/post_norm", y);
        }

        /** Feed-forward sub-layer (dense or mixture of experts) with its norm and residual add. */
        private String feedForward(String p, String x) {
            String in = m.preNorm ? norm(p + "/norm", x) : x;
            String h;
            long up = m.ffnKind.gated() ? 2 * m.ffn : m.ffn;
            String out;
            if (m.experts > 1) {
                linear(p + "/router", LayerRole.Kind.ROUTER, in, m.hidden, m.experts, false);
                long perExpert = Math.max(1, Math.round((double) m.topK * s / m.experts));
                SymbolicShape tokens = SymbolicShape.of(Dim.of(m.experts), new Dim(perExpert, 0), Dim.of(m.hidden));
                String routed = op(p + "/dispatch", LayerRole.Kind.EXPERT_DISPATCH, "Expand", tokens, in);
                String w1 = param(p + ".experts.up.weight", m.experts, m.hidden, up);
                String u = op(p + "/experts/up", LayerRole.Kind.EXPERT_IN, "MatMul", SymbolicShape.of(
                        Dim.of(m.experts), new Dim(perExpert, 0), Dim.of(up)), routed, w1);
                h = activation(p + "/experts", LayerRole.Kind.EXPERT_ACT, u, SymbolicShape.of(Dim.of(m.experts),
                        new Dim(perExpert, 0), Dim.of(m.ffn)));
                String w2 = param(p + ".experts.down.weight", m.experts, m.ffn, m.hidden);
                String d = op(p + "/experts/down", LayerRole.Kind.EXPERT_OUT, "MatMul", tokens, h, w2);
                out = op(p + "/combine", LayerRole.Kind.EXPERT_COMBINE, "ReduceSum", rows(m.hidden), d);
            } else {
                String u = linear(p + "/up", LayerRole.Kind.MLP_IN, in, m.hidden, up, m.bias);
                h = activation(p, LayerRole.Kind.MLP_ACT, u, rows(m.ffn));
                out = linear(p + "/down", LayerRole.Kind.MLP_OUT, h, m.ffn, m.hidden, m.bias);
            }
            out = op(p + "/dropout", LayerRole.Kind.DROPOUT, "Dropout", rows(m.hidden), out);
            String y = op(p + "/residual", LayerRole.Kind.RESIDUAL, "Add", rows(m.hidden), x, out);
            return m.preNorm ? y : norm(p + "/post_norm", y);
        }

        private String activation(String p, LayerRole.Kind kind, String u, SymbolicShape out) {
            return switch (m.ffnKind) {
                case GELU -> op(p + "/act", kind, "Gelu", out, u);
                case RELU -> op(p + "/act", kind, "Relu", out, u);
                case SWIGLU -> op(p + "/gate", kind, "Mul", out, op(p + "/act", kind, "Sigmoid", out, u), u);
                case GATED_GELU -> op(p + "/gate", kind, "Mul", out, op(p + "/act", kind, "Gelu", out, u), u);
            };
        }
    }
}
