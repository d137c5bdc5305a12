package org.scaledl.transformer;

import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
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
 * hidden size, attention (heads and key/value heads: multi-head, grouped-query, multi-query; or DeepSeek's multi-head
 * latent attention, {@link Mla}; full, sliding-window or chunked; fused as FlashAttention runs it or not), the
 * feed-forward (GELU, ReLU, squared ReLU, or gated SwiGLU / gated GELU; dense or a mixture of experts with shared
 * experts, {@link Moe}), state-space mixers (Mamba-2, {@link Mamba}) in hybrid models, the layers in order
 * ({@link Block}: each layer's mixer and feed-forward, so DeepSeek's dense first layers, Llama 4's interleaved MoE
 * layers, GPT-OSS's alternating sliding windows and Nemotron-H's hybrid pattern are one list), vocabulary, positions
 * (learned, rotary, relative), norm (LayerNorm or RMSNorm), biases, dropouts and tied embeddings.
 * {@link #graph(long)} builds its layer graph for a sequence length in the vocabulary of an ONNX import
 * ({@code Gemm}, {@code MatMul}, {@code LayerNormalization}, {@code Softmax}, {@code Gelu}, {@code Gather} of an
 * embedding...), each layer with its {@link LayerRole}, so the same layer cost model predicts both; the graph holds
 * each distinct kind of block once ({@link ModelGraph#repeats}), so a 96-layer model costs one layer's analysis.
 *
 * <pre>{@code
 * TransformerSpec gpt3 = TransformerSpec.decoder("gpt3-175b", 12288, 96, 96, 50257).maxPositions(2048).build();
 * TransformerSpec llama = HuggingFaceConfig.read(Path.of("config.json"));
 * ModelGraph g = gpt3.graph(2048);            // batch symbolic: sequences per micro-batch
 * long params = gpt3.parameterCount();        // 174,604,259,328: the paper's "175B"
 * }</pre>
 *
 * <p>Parameter counts are exact for the architectures of Hugging Face's {@code GPT2LMHeadModel},
 * {@code LlamaForCausalLM}, {@code MistralForCausalLM}, {@code MixtralForCausalLM}, {@code Qwen2ForCausalLM},
 * {@code Qwen3ForCausalLM}, {@code Qwen3MoeForCausalLM}, {@code DeepseekV3ForCausalLM} (without its multi-token
 * prediction module), {@code GptOssForCausalLM}, {@code NemotronForCausalLM}, {@code NemotronHForCausalLM},
 * {@code Llama4ForCausalLM}, {@code OPTForCausalLM}, {@code BertForMaskedLM}, {@code T5ForConditionalGeneration},
 * {@code GemmaForCausalLM}, {@code Gemma2ForCausalLM}, Gemma 3's and Gemma 4's text models (without Gemma 4's
 * per-layer inputs), {@code Phi3ForCausalLM}, {@code Olmo2ForCausalLM}, {@code Glm4ForCausalLM},
 * {@code Starcoder2ForCausalLM} and {@code GPTNeoXForCausalLM} ({@code Qwen2MoeForCausalLM} less its shared
 * expert's gate); the contractions' FLOPs are those of the closed forms (Narayanan et al.,
 * SC '21, Eq. 3: {@code 24·B·s·h² + 4·B·s²·h} per layer forward, {@code 2·B·s·h·V} for the logits), with a fused
 * causal attention core doing half the score work and a causal sliding window of {@code w} about
 * {@code w - w²/2s} keys a query (its queries attend {@code min(i, w)} keys).
 */
public final class TransformerSpec {

    /** Which stacks the model has. */
    public enum Architecture {
        /** GPT-style causal decoder. */
        DECODER,
        /** BERT-style bidirectional encoder with a masked-language-model head. */
        ENCODER,
        /** T5-style encoder and decoder with cross-attention. */
        ENCODER_DECODER
    }

    /** The feed-forward's activation. */
    public enum FfnKind {
        /** {@code act(x·W1 + b1)·W2 + b2} with GELU. */
        GELU,
        /** {@code act(x·W1 + b1)·W2 + b2} with ReLU. */
        RELU,
        /** {@code relu(x·W1)²·W2} (Nemotron's squared ReLU). */
        RELU2,
        /** {@code (silu(x·Wg) ⊙ x·Wu)·Wd} (Llama, Mistral, Qwen, DeepSeek). */
        SWIGLU,
        /** {@code (gelu(x·Wg) ⊙ x·Wu)·Wd} (T5 v1.1). */
        GATED_GELU,
        /**
         * GPT-OSS's gated activation, {@code (g·σ(1.702·g) ⊙ (u + 1))·Wd} with the gate {@code g = x·Wg} clamped
         * above and the linear half {@code u = x·Wu} clamped both ways at {@code swiglu_limit}. Megatron core runs the
         * clamps as PyTorch operations of their own before its compiled gated kernel (two clamps over the halves of
         * the projection's output and their concatenation: 8 widths of the result moved before the kernel's 3);
         * Transformer Engine's op fuser ({@code use_transformer_engine_op_fuser}, Megatron-Bridge's Blackwell MX-FP8
         * recipe of GPT-OSS 120B) folds the experts' into its fused grouped MLP on Blackwell's data-centre parts with
         * MX-FP8 or NVFP4 ({@link Layer#FUSED_GROUPED_MLP}), where the Megatron execution leaves them out.
         */
        CLAMPED_SWIGLU;

        /** Whether the block has a gate projection beside the up projection. */
        public boolean gated() {
            return this == SWIGLU || this == GATED_GELU || this == CLAMPED_SWIGLU;
        }
    }

    /** The normalisation layers. */
    public enum Norm {
        /** LayerNorm with scale and bias. */
        LAYER_NORM,
        /** RMSNorm: scale only. */
        RMS_NORM
    }

    /**
     * One transformer layer: its token mixer and its feed-forward. A layer of a plain transformer is attention then a
     * dense MLP; hybrid models have layers with a Mamba mixer only, an MLP only, or experts only.
     *
     * @param mixer   attention, a state-space (Mamba-2) mixer, or none
     * @param window  the attention's window in tokens (0: the whole sequence); with {@code chunked}, the chunk
     * @param chunked attention within fixed chunks of {@code window} tokens (Llama 4) rather than a sliding window
     * @param ffn     a dense MLP, a mixture of experts, or none
     * @param ffnSize the dense MLP's inner size (0 for experts and none)
     * @param headDim the attention's head size in this layer (0: the model's; Gemma 4's full-attention layers)
     * @param kvHeads the attention's key/value heads in this layer (0: the model's)
     * @param keysAsValues whether the keys' projection serves as the values too (no value projection: Gemma 4's
     *                     {@code attention_k_eq_v} layers)
     */
    public record Block(Mixer mixer, long window, boolean chunked, Ffn ffn, long ffnSize, long headDim, long kvHeads,
            boolean keysAsValues) {
        /** A layer's token mixer. */
        public enum Mixer {
            /** Self-attention. */
            ATTENTION,
            /** A Mamba-2 state-space mixer. */
            MAMBA,
            /** None (an MLP-only or experts-only layer). */
            NONE
        }

        /** A layer's feed-forward. */
        public enum Ffn {
            /** A dense MLP of {@code ffnSize}. */
            DENSE,
            /** The mixture of experts. */
            MOE,
            /** None (a mixer-only layer). */
            NONE
        }

        /** Validates. */
        public Block {
            Objects.requireNonNull(mixer, "mixer");
            Objects.requireNonNull(ffn, "ffn");
            Checks.argument(window >= 0 && (window == 0 || mixer == Mixer.ATTENTION), "a window needs attention: %s",
                    window);
            Checks.argument(!chunked || window > 0, "chunked attention needs a chunk size");
            Checks.argument((ffn == Ffn.DENSE) == (ffnSize > 0), "a dense layer has an inner size (%s, %s)", ffn,
                    ffnSize);
            Checks.argument(mixer != Mixer.NONE || ffn != Ffn.NONE, "a layer needs a mixer or a feed-forward");
            Checks.argument(headDim >= 0 && headDim <= 1L << 14 && kvHeads >= 0 && kvHeads <= 1L << 14,
                    "a layer's head size %s and key/value heads %s must be in 0..%s (0: the model's)", headDim, kvHeads,
                    1L << 14);
            Checks.argument(mixer == Mixer.ATTENTION || headDim == 0 && kvHeads == 0 && !keysAsValues,
                    "a layer's head size, key/value heads and keys as values need attention");
        }

        /** A layer of the model's attention geometry. */
        public Block(Mixer mixer, long window, boolean chunked, Ffn ffn, long ffnSize) {
            this(mixer, window, chunked, ffn, ffnSize, 0, 0, false);
        }

        /** This layer with its own attention geometry (see the components). */
        public Block withAttention(long layerHeadDim, long layerKvHeads, boolean keysServeAsValues) {
            return new Block(mixer, window, chunked, ffn, ffnSize, layerHeadDim, layerKvHeads, keysServeAsValues);
        }

        // written out: a record's generated equals and hashCode are linked through method handles on first use, which
        // costs a cold JVM milliseconds per record class (the start-up of one prediction)
        @Override
        public boolean equals(Object o) {
            return o instanceof Block b && mixer == b.mixer && window == b.window && chunked == b.chunked
                    && ffn == b.ffn && ffnSize == b.ffnSize && headDim == b.headDim && kvHeads == b.kvHeads
                    && keysAsValues == b.keysAsValues;
        }

        @Override
        public int hashCode() {
            int h = (((mixer.hashCode() * 31 + Long.hashCode(window)) * 31 + (chunked ? 1 : 0)) * 31
                    + ffn.hashCode()) * 31 + Long.hashCode(ffnSize);
            return ((h * 31 + Long.hashCode(headDim)) * 31 + Long.hashCode(kvHeads)) * 31 + (keysAsValues ? 1 : 0);
        }

        /** Attention over the whole sequence followed by a dense MLP of {@code ffn}. */
        public static Block dense(long ffn) {
            return new Block(Mixer.ATTENTION, 0, false, Ffn.DENSE, ffn);
        }

        /** Attention over the whole sequence followed by the experts. */
        public static Block moe() {
            return new Block(Mixer.ATTENTION, 0, false, Ffn.MOE, 0);
        }
    }

    /**
     * DeepSeek's multi-head latent attention: queries through a low-rank projection (when {@code qLoraRank > 0}),
     * keys and values from a shared compressed latent, each head's query and key a non-positional part and a rotary
     * part shared across heads.
     *
     * @param qLoraRank  rank of the query's down projection (0: a plain query projection)
     * @param kvLoraRank rank of the key/value latent
     * @param qkNopeDim  per head, the query and key dimensions without positions
     * @param qkRopeDim  per head, the rotary dimensions (the key's shared across heads)
     * @param vDim       per head, the value dimension
     */
    public record Mla(long qLoraRank, long kvLoraRank, long qkNopeDim, long qkRopeDim, long vDim) {
        /** Validates. */
        public Mla {
            Checks.argument(qLoraRank >= 0 && kvLoraRank > 0 && qkNopeDim > 0 && qkRopeDim >= 0 && vDim > 0
                    && kvLoraRank <= 1L << 20 && qLoraRank <= 1L << 20 && qkNopeDim + qkRopeDim <= 1L << 14
                    && vDim <= 1L << 14, "latent attention sizes out of range: %s, %s, %s, %s, %s", qLoraRank,
                    kvLoraRank, qkNopeDim, qkRopeDim, vDim);
        }
    }

    /**
     * DeepSeek's sparse attention (DeepSeek-V3.2, GLM-5): a lightning indexer scores every earlier key for each query
     * with {@code heads} small heads of {@code headDim} (their ReLU'd dot products weighted per head and summed), and
     * the attention then reads only the {@code topK} best keys of each query. Queries before the {@code topK}-th
     * attend to every earlier key, as dense causal attention does.
     *
     * @param topK    keys each query attends to
     * @param heads   the indexer's heads
     * @param headDim the indexer's head dimension
     */
    public record Dsa(int topK, long heads, long headDim) {
        /** Validates. */
        public Dsa {
            Checks.argument(topK >= 1 && heads >= 1 && headDim >= 1 && heads <= 1L << 14 && headDim <= 1L << 14,
                    "sparse attention sizes out of range: top-%s keys, %s heads of %s", topK, heads, headDim);
        }

        /**
         * The keys a query attends to on average over a causal sequence of {@code s}: every earlier key up to the
         * {@code topK}-th query, {@code topK} after, {@code (k(k+1)/2 + (s-k)·k)/s} for {@code s > k}.
         */
        public long causalKeys(long s) {
            return TransformerShape.sparseCausalKeys(s, topK);
        }
    }

    /**
     * A mixture of experts: {@code experts} routed experts of inner size {@code expertFfn}, each token routed to
     * {@code topK}, and {@code sharedFfn} of shared experts every token goes through.
     *
     * @param experts    routed experts
     * @param topK       experts each token is routed to
     * @param expertFfn  inner size of one routed expert
     * @param sharedFfn  inner size of the shared experts together (0: none)
     * @param routerBias whether the router's projection has a bias (GPT-OSS)
     * @param scoreBias  whether the router keeps a per-expert score correction (DeepSeek's aux-loss-free balancing)
     * @param expertBias whether the experts' projections have biases (GPT-OSS)
     * @param latent     the latent width the routed experts work in (Nemotron-3's LatentMoE: tokens projected down
     *                   before the dispatch and back after the combination); 0: the hidden size
     * @param branchNorms whether the shared MLP and the routed experts each norm their input and their output, and the
     *                    router reads its own norm (a scale per channel) and scales each expert's weight (Gemma 4)
     */
    public record Moe(int experts, int topK, long expertFfn, long sharedFfn, boolean routerBias, boolean scoreBias,
            boolean expertBias, long latent, boolean branchNorms) {
        /** The most experts a model may have. */
        public static final int MAX_EXPERTS = 1 << 14;

        /** Validates. */
        public Moe {
            Checks.argument(experts >= 1 && experts <= MAX_EXPERTS && topK >= 1 && topK <= experts,
                    "top-%s of %s experts (at most %s)", topK, experts, MAX_EXPERTS);
            Checks.argument(expertFfn > 0 && expertFfn <= 1L << 22 && sharedFfn >= 0 && sharedFfn <= 1L << 22
                    && latent >= 0 && latent <= 1L << 20, "expert sizes out of range: %s, %s, latent %s", expertFfn,
                    sharedFfn, latent);
            Checks.argument(!branchNorms || sharedFfn > 0 && latent == 0, "the branches' own norms need a shared MLP "
                    + "beside the experts, in the hidden width");
        }

        /** Experts in the hidden width (no latent projection). */
        public Moe(int experts, int topK, long expertFfn, long sharedFfn, boolean routerBias, boolean scoreBias,
                boolean expertBias) {
            this(experts, topK, expertFfn, sharedFfn, routerBias, scoreBias, expertBias, 0);
        }

        /** Experts without their own norms. */
        public Moe(int experts, int topK, long expertFfn, long sharedFfn, boolean routerBias, boolean scoreBias,
                boolean expertBias, long latent) {
            this(experts, topK, expertFfn, sharedFfn, routerBias, scoreBias, expertBias, latent, false);
        }
    }

    /**
     * A Mamba-2 mixer: {@code heads} heads of {@code headDim} (the inner size is their product), a state of
     * {@code stateSize} per group of heads, a causal convolution of {@code convKernel} taps, scanned in chunks.
     *
     * @param heads      heads
     * @param headDim    dimension of one head
     * @param stateSize  the state's size per group
     * @param groups     groups sharing the input-dependent B and C
     * @param convKernel the causal convolution's taps
     * @param projBias   whether the projections have biases
     * @param convBias   whether the convolution has a bias
     * @param chunk      the scan's chunk length
     * @param deltaRule  a Gated DeltaNet mixer (Qwen3-Next's linear attention): the same projections and convolution,
     *                   {@code groups} key heads of {@code stateSize} and {@code heads} value heads of {@code headDim},
     *                   two scalars a head (the decay and the step) and the delta rule's chunked products
     */
    public record Mamba(long heads, long headDim, long stateSize, long groups, int convKernel, boolean projBias,
            boolean convBias, int chunk, boolean deltaRule) {
        /** Validates. */
        public Mamba {
            Checks.argument(heads > 0 && headDim > 0 && stateSize > 0 && groups > 0 && convKernel > 0 && chunk > 0
                    && heads <= 1L << 14 && headDim <= 1L << 14 && stateSize <= 1L << 14 && groups <= heads
                    && convKernel <= 64 && chunk <= 1 << 16, "%s sizes out of range: heads %s x %s, state %s, "
                    + "groups %s, kernel %s, chunk %s", deltaRule ? "Gated DeltaNet" : "Mamba", heads, headDim,
                    stateSize, groups, convKernel, chunk);
            Checks.argument(heads % groups == 0, "%s: %s heads do not split into %s groups (each group serves whole "
                    + "heads)", deltaRule ? "Gated DeltaNet" : "Mamba", heads, groups);
        }

        /** A Mamba-2 mixer. */
        public Mamba(long heads, long headDim, long stateSize, long groups, int convKernel, boolean projBias,
                boolean convBias, int chunk) {
            this(heads, headDim, stateSize, groups, convKernel, projBias, convBias, chunk, false);
        }

        /** The mixer's inner size, heads times their dimension. */
        public long inner() {
            return heads * headDim;
        }
    }

    /** The largest hidden, inner or head size (and head count) a specification takes. */
    public static final long MAX_SIZE = 1L << 22;
    /** The largest vocabulary a specification takes. */
    public static final long MAX_VOCAB = 1L << 24;
    /**
     * The widest attention head a fused core takes by default ({@link #fusedAttention()}, {@link #fusedHeadLimit()}):
     * FlashAttention 2 and 3 and cuDNN's training kernels stop at 256 (Transformer Engine's backend filters, 2026;
     * cuDNN fuses wider heads only forward). A layer whose queries' or values' heads are wider (Gemma 4's 512-wide
     * global layers) is built with an unfused core, its scores and probabilities in memory, as Transformer Engine
     * falls back to them; the other layers keep the fused one.
     */
    public static final long MAX_FUSED_HEAD_SIZE = 256;

    private final String name;
    private final Architecture architecture;
    private final long hidden;
    private final long heads;
    private final long kvHeads;
    private final long headDim;
    private final long ffn;
    private final FfnKind ffnKind;
    private final List<Block> blocks;
    private final int decoderLayers;
    private final long vocab;
    private final long maxPositions;
    /** The positions a rotary model's configuration names (0: none stated); not part of the architecture. */
    private final long contextPositions;
    private final String storedQuantization;
    private final long typeVocab;
    private final int relativeBuckets;
    private final Norm norm;
    private final boolean preNorm;
    private final boolean qkvBias;
    private final boolean outBias;
    private final boolean mlpBias;
    private final boolean tiedEmbeddings;
    private final Optional<Mla> mla;
    private final Optional<Dsa> dsa;
    private final Optional<Moe> moe;
    private final Optional<Mamba> mamba;
    private final boolean qkNorm;
    private final boolean sinks;
    private final boolean outputGate;
    private final boolean attentionDropout;
    private final boolean hiddenDropout;
    private final boolean fusedAttention;
    private final long fusedHeadLimit;
    private final int mtpLayers;
    private final int routingGroups;
    private final int groupsPicked;
    private final boolean sandwichNorm;
    private final boolean wholeQkNorm;
    private final boolean scoreSoftcap;
    private final boolean logitSoftcap;
    private final List<String> readNotes;

    private TransformerSpec(Builder b, long headDim, long kvHeads, long ffn, List<Block> blocks) {
        this.name = b.name;
        this.architecture = b.decoderLayers > 0 ? Architecture.ENCODER_DECODER : b.architecture;
        this.hidden = b.hidden;
        this.heads = b.heads;
        this.kvHeads = kvHeads;
        this.headDim = headDim;
        this.ffn = ffn;
        this.ffnKind = b.ffnKind;
        this.blocks = List.copyOf(blocks);
        this.decoderLayers = b.decoderLayers;
        this.vocab = b.vocab;
        this.maxPositions = b.maxPositions;
        this.contextPositions = b.contextPositions;
        this.storedQuantization = b.storedQuantization;
        this.typeVocab = b.typeVocab;
        this.relativeBuckets = b.relativeBuckets;
        this.norm = b.norm;
        this.preNorm = b.preNorm;
        this.qkvBias = b.qkvBias;
        this.outBias = b.outBias;
        this.mlpBias = b.mlpBias;
        this.tiedEmbeddings = b.tied;
        this.mla = Optional.ofNullable(b.mla);
        this.dsa = Optional.ofNullable(b.dsa);
        // experts described for no layer (every layer listed dense: Qwen's mlp_only_layers) make no mixture of
        // experts: not its interval, nor its expert parallelism
        this.moe = Optional.ofNullable(b.moe).filter(x -> this.blocks.stream().anyMatch(
                bl -> bl.ffn() == Block.Ffn.MOE));
        this.mamba = Optional.ofNullable(b.mamba);
        this.qkNorm = b.qkNorm;
        this.sinks = b.sinks;
        this.outputGate = b.outputGate;
        this.attentionDropout = b.attentionDropout;
        this.hiddenDropout = b.hiddenDropout;
        this.fusedAttention = b.fusedAttention;
        this.fusedHeadLimit = b.fusedHeadLimit;
        this.mtpLayers = b.mtpLayers;
        this.routingGroups = b.routingGroups;
        this.groupsPicked = b.groupsPicked;
        this.sandwichNorm = b.sandwichNorm;
        this.wholeQkNorm = b.wholeQkNorm;
        this.scoreSoftcap = b.scoreSoftcap;
        this.logitSoftcap = b.logitSoftcap;
        this.readNotes = b.readNotes;
        validate();
    }

    /** The most layers (encoder and decoder together) a model may have: beyond any model built. */
    static final int MAX_LAYERS = 10_000;

    private void validate() {
        Checks.argument(hidden > 0 && heads > 0 && kvHeads > 0 && headDim > 0 && ffn > 0 && !blocks.isEmpty()
                && vocab > 0, "%s: hidden size, heads, key/value heads, head size, feed-forward size, layers and "
                + "vocabulary must be positive", name);
        Checks.argument(heads % kvHeads == 0, "%s: heads (%s) must be a multiple of key/value heads (%s)", name,
                heads, kvHeads);
        Checks.argument(maxPositions >= 0 && typeVocab >= 0 && relativeBuckets >= 0 && decoderLayers >= 0,
                "%s: position, type and bucket counts must be >= 0", name);
        Checks.argument(hidden <= 1L << 20 && ffn <= 1L << 22 && blocks.size() + (long) decoderLayers <= MAX_LAYERS
                && vocab <= 1L << 24 && heads <= 1L << 14 && headDim <= 1L << 14 && maxPositions <= 1L << 26
                && typeVocab <= 1L << 20 && relativeBuckets <= 1 << 16, "%s: sizes beyond any model (hidden %s, "
                + "ffn %s, layers %s, vocabulary %s, heads %s, head size %s)", name, hidden, ffn,
                blocks.size() + decoderLayers, vocab, heads, headDim);
        Checks.argument(moe.isEmpty() || moe.get().experts() > 1, "%s: one routed expert is a dense feed-forward "
                + "(a router with one choice routes nothing): describe it as a dense model of the expert's size, or "
                + "give two experts or more", name);
        for (Block bl : blocks) {
            Checks.argument(bl.ffn() != Block.Ffn.MOE || moe.isPresent(), "%s: an experts layer needs the experts "
                    + "described", name);
            Checks.argument(bl.mixer() != Block.Mixer.MAMBA || mamba.isPresent(), "%s: a Mamba layer needs the "
                    + "mixer described", name);
            Checks.argument(bl.ffnSize() <= 1L << 22, "%s: feed-forward size %s beyond any model", name,
                    bl.ffnSize());
            Checks.argument(bl.kvHeads() == 0 || heads % bl.kvHeads() == 0, "%s: heads (%s) must be a multiple of a "
                    + "layer's key/value heads (%s)", name, heads, bl.kvHeads());
            Checks.argument(mla.isEmpty() || bl.headDim() == 0 && bl.kvHeads() == 0 && !bl.keysAsValues(), "%s: "
                    + "latent attention has one geometry in every layer", name);
        }
        Checks.argument(architecture != Architecture.ENCODER_DECODER || blocks.stream().allMatch(
                x -> x.equals(Block.dense(ffn))), "%s: an encoder-decoder model has plain layers", name);
        Checks.argument(mla.isEmpty() || architecture == Architecture.DECODER, "%s: latent attention in a decoder "
                + "only", name);
        Checks.argument(dsa.isEmpty() || mla.isPresent(), "%s: sparse attention over latent attention only", name);
        Checks.argument(!outputGate || (mla.isEmpty() && architecture == Architecture.DECODER), "%s: an attention "
                + "output gate in a decoder without latent attention only", name);
        Checks.argument(mtpLayers >= 0 && mtpLayers <= 16, "%s: multi-token-prediction layers must be in 0..16: %s",
                name, mtpLayers);
        Checks.argument(routingGroups == 0 || moe.isPresent() && experts() % routingGroups == 0 && groupsPicked >= 1
                && groupsPicked <= routingGroups && (long) groupsPicked * (experts() / routingGroups) >= topK(),
                "%s: routing groups %s (%s picked a token) must divide the routed experts and hold a token's experts",
                name, routingGroups, groupsPicked);
        Checks.argument(!wholeQkNorm || qkNorm, "%s: norms over the whole query and key projections (wholeQkNorm) "
                + "need the query and key norms (qkNorm)", name);
    }

    /** A builder holding every setting of this specification. */
    public Builder toBuilder() {
        Builder b = new Builder(name, architecture == Architecture.ENCODER_DECODER ? Architecture.DECODER
                : architecture, hidden, heads, blocks.size(), vocab);
        b.kvHeads = kvHeads;
        b.headDim = headDim;
        b.ffn = ffn;
        b.ffnKind = ffnKind;
        b.decoderLayers = decoderLayers;
        b.maxPositions = maxPositions;
        b.contextPositions = contextPositions;
        b.storedQuantization = storedQuantization;
        b.typeVocab = typeVocab;
        b.relativeBuckets = relativeBuckets;
        b.norm = norm;
        b.preNorm = preNorm;
        b.qkvBias = qkvBias;
        b.outBias = outBias;
        b.mlpBias = mlpBias;
        b.tied = tiedEmbeddings;
        b.mla = mla.orElse(null);
        b.dsa = dsa.orElse(null);
        b.moe = moe.orElse(null);
        b.mamba = mamba.orElse(null);
        b.blocks = blocks;
        b.qkNorm = qkNorm;
        b.sinks = sinks;
        b.outputGate = outputGate;
        b.attentionDropout = attentionDropout;
        b.hiddenDropout = hiddenDropout;
        b.fusedAttention = fusedAttention;
        b.fusedHeadLimit = fusedHeadLimit;
        b.mtpLayers = mtpLayers;
        b.routingGroups = routingGroups;
        b.groupsPicked = groupsPicked;
        b.sandwichNorm = sandwichNorm;
        b.wholeQkNorm = wholeQkNorm;
        b.scoreSoftcap = scoreSoftcap;
        b.logitSoftcap = logitSoftcap;
        b.readNotes = readNotes;
        return b;
    }

    /**
     * What reading the configuration assumed or changed ({@link HuggingFaceConfig}: a default taken for a missing
     * key, a multimodal model's text model read alone, a wrapper read as its text model, heads too wide for a fused
     * core...), each as it names its source; empty for a specification built in code. These are what the reader logs
     * as warnings, for a caller without an SLF4J binding; they do not change the model, and {@link #equals} does not
     * compare them.
     */
    public List<String> readNotes() {
        return readNotes;
    }

    /** A copy with these {@link #readNotes()} instead of its own. */
    public TransformerSpec withReadNotes(List<String> notes) {
        return toBuilder().readNotes(notes).build();
    }

    /** A copy with the attention core fused or not ({@link Builder#fusedAttention}). */
    public TransformerSpec withFusedAttention(boolean value) {
        return value == fusedAttention ? this : toBuilder().fusedAttention(value).build();
    }

    /** Starts a GPT-style decoder: pre-LayerNorm, GELU feed-forward of 4·hidden, biases, tied embeddings, learned
     * positions (set {@link Builder#maxPositions}), heads of {@code hidden / heads}, dropouts, unfused attention.
     */
    public static Builder decoder(String name, long hidden, long heads, int layers, long vocab) {
        return new Builder(name, Architecture.DECODER, hidden, heads, layers, vocab);
    }

    /** Starts a BERT-style encoder: post-LayerNorm, GELU, biases, tied MLM decoder, learned positions. */
    public static Builder encoder(String name, long hidden, long heads, int layers, long vocab) {
        return new Builder(name, Architecture.ENCODER, hidden, heads, layers, vocab).preNorm(false);
    }

    /** A name for reports. */
    public String name() {
        return name;
    }

    /** Which stacks the model has. */
    public Architecture architecture() {
        return architecture;
    }

    /** Hidden size {@code h}. */
    public long hidden() {
        return hidden;
    }

    /** Attention heads. */
    public long heads() {
        return heads;
    }

    /** Key/value heads (the heads without GQA; 1 for MQA; the heads with latent attention). */
    public long kvHeads() {
        return kvHeads;
    }

    /** The size of one head (for latent attention, the value's). */
    public long headDim() {
        return headDim;
    }

    /** The dense feed-forward's inner size (the first dense layer's; the experts' for an all-experts model). */
    public long ffn() {
        return ffn;
    }

    /** The feed-forward's activation. */
    public FfnKind ffnKind() {
        return ffnKind;
    }

    /** Layers of the (encoder) stack. */
    public int layers() {
        return blocks.size();
    }

    /** The layers of the (encoder) stack, in order. */
    public List<Block> blocks() {
        return blocks;
    }

    /** Decoder layers of an encoder–decoder model (0 otherwise). */
    public int decoderLayers() {
        return decoderLayers;
    }

    /** Vocabulary size. */
    public long vocab() {
        return vocab;
    }

    /** Learned position embeddings (0 for rotary or relative positions). */
    public long maxPositions() {
        return maxPositions;
    }

    /**
     * The sequence a model without learned positions (rotary) was configured for, its configuration's
     * {@code max_position_embeddings} (after any RoPE scaling it states), or 0 where none is stated. A longer
     * sequence is built all the same (a context extension is the user's to make) and logged as a warning; it is no
     * part of the architecture ({@link #equals} ignores it).
     */
    public long contextPositions() {
        return contextPositions;
    }

    /**
     * The format its checkpoint stores the weights in, where the configuration says one ({@code quantization_config}'s
     * {@code quant_method}: {@code fp8}, {@code mxfp4}); not read: the weights are predicted in the job's precision,
     * and a prediction says so where it matters (serving, a frozen LoRA base).
     */
    public java.util.Optional<String> storedQuantization() {
        return storedQuantization.isEmpty() ? java.util.Optional.empty() : java.util.Optional.of(storedQuantization);
    }

    /** The norm. */
    public Norm norm() {
        return norm;
    }

    /** Whether the output projection shares the input embedding's weight. */
    public boolean tiedEmbeddings() {
        return tiedEmbeddings;
    }

    /** The latent attention, if the model has it. */
    public Optional<Mla> mla() {
        return mla;
    }

    /** The sparse attention's indexer, if the model has one. */
    public Optional<Dsa> dsa() {
        return dsa;
    }

    /** The mixture of experts, if the model has one. */
    public Optional<Moe> moe() {
        return moe;
    }

    /** The Mamba mixer, if the model has one. */
    public Optional<Mamba> mamba() {
        return mamba;
    }

    /** Routed experts (1: dense). */
    public int experts() {
        return moe.map(Moe::experts).orElse(1);
    }

    /** Experts each token is routed to (1 when dense). */
    public int topK() {
        return moe.map(Moe::topK).orElse(1);
    }

    /**
     * Whether the attention core runs fused (FlashAttention: no score matrix in memory, causal work halved), in the
     * layers whose heads a fused kernel takes ({@link #MAX_FUSED_HEAD_SIZE}).
     */
    public boolean fusedAttention() {
        return fusedAttention;
    }

    /**
     * The widest head a fused core takes ({@link Builder#fusedHeadLimit}; {@link #MAX_FUSED_HEAD_SIZE} unless set):
     * a layer of wider heads is built with an unfused core.
     */
    public long fusedHeadLimit() {
        return fusedHeadLimit;
    }

    /**
     * The wider of a layer kind's query and value heads (latent attention's; else the kind's own head size or the
     * model's): what a fused core of that layer must take ({@link #fusedHeadLimit()}).
     */
    long headWidth(Block kind) {
        long hd = kind.headDim() > 0 ? kind.headDim() : headDim;
        return mla.map(a -> Math.max(a.qkNopeDim() + a.qkRopeDim(), a.vDim())).orElse(hd);
    }

    /** Whether the attention probabilities have a dropout. */
    public boolean attentionDropout() {
        return attentionDropout;
    }

    /** Whether the embeddings and each sub-layer's output have a dropout. */
    public boolean hiddenDropout() {
        return hiddenDropout;
    }

    /** Multi-token-prediction layers the configuration describes (see {@link Builder#mtpLayers}). */
    public int mtpLayers() {
        return mtpLayers;
    }

    /** Layers of all stacks. */
    public int totalLayers() {
        return blocks.size() + decoderLayers;
    }

    /** Trainable parameters, exactly (every copy of every block; a tied weight once). */
    public long parameterCount() {
        return graph(Math.max(1, Math.min(8, maxPositions == 0 ? 8 : maxPositions))).parameterCount();
    }

    /** The shape the execution and memory models read. */
    public TransformerShape shape(long seq) {
        long kvWidth = mla.map(x -> heads * (x.qkNopeDim() + x.qkRopeDim() + x.vDim()))
                .orElse(2 * kvHeads * headDim);
        long dispatch = moe.map(m -> m.latent() > 0 ? m.latent() : hidden).orElse(hidden);
        return new TransformerShape(hidden, heads, kvHeads, ffn, totalLayers(), vocab, seq, experts(), topK(),
                kvWidth, fusedAttention, mtpLayers, dispatch, dsa.map(Dsa::topK).orElse(0), contextPositions,
                routingGroups, groupsPicked, storedQuantization);
    }

    /**
     * The layer graph for a sequence length, batch symbolic (sequences per micro-batch): embeddings, each distinct
     * block once with {@link ModelGraph#repeats} its layer count, the output projection and the loss, every layer
     * with its {@link LayerRole}.
     *
     * @throws IllegalArgumentException for a sequence longer than the learned positions or not positive
     */
    public ModelGraph graph(long seq) {
        Checks.argument(seq > 0 && seq <= 1L << 24, "sequence length must be in 1..%s: %s", 1L << 24, seq);
        Checks.argument(maxPositions == 0 || seq <= maxPositions, "%s: sequence %s is longer than its %s learned "
                + "positions", name, seq, maxPositions);
        // a sequence beyond the configuration's context is built as given; every prediction of it says so
        // (TransformerShape.beyondContext)
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
        private long contextPositions;
        private String storedQuantization = "";
        private long typeVocab;
        private int relativeBuckets;
        private Norm norm = Norm.LAYER_NORM;
        private boolean preNorm = true;
        private boolean qkvBias = true;
        private boolean outBias = true;
        private boolean mlpBias = true;
        private boolean tied = true;
        private Mla mla;
        private Dsa dsa;
        private Moe moe;
        /** Experts and top-k of {@link #experts}, made a {@link Moe} of the dense size at build time. */
        private int[] routed;
        private Mamba mamba;
        private List<Block> blocks;
        private boolean qkNorm;
        private boolean sinks;
        private boolean outputGate;
        private boolean attentionDropout = true;
        private boolean hiddenDropout = true;
        private boolean fusedAttention;
        private long fusedHeadLimit = MAX_FUSED_HEAD_SIZE;
        private int mtpLayers;
        private int routingGroups;
        private int groupsPicked;
        private boolean sandwichNorm;
        private boolean wholeQkNorm;
        private boolean scoreSoftcap;
        private boolean logitSoftcap;
        private List<String> readNotes = List.of();

        Builder(String name, Architecture architecture, long hidden, long heads, int layers, long vocab) {
            this.name = Objects.requireNonNull(name, "name");
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

        /** The dense feed-forward's inner size (default 4 · hidden). */
        public Builder ffn(long value) {
            this.ffn = value;
            return this;
        }

        /** The feed-forward's activation (default GELU). */
        public Builder ffnKind(FfnKind value) {
            this.ffnKind = Objects.requireNonNull(value, "ffnKind");
            return this;
        }

        /** Decoder layers: makes the model an encoder–decoder. */
        public Builder decoderLayers(int value) {
            this.decoderLayers = value;
            return this;
        }

        /**
         * The format its checkpoint stores the weights in ({@link TransformerSpec#storedQuantization()}; default
         * empty, none stated).
         */
        public Builder storedQuantization(String value) {
            this.storedQuantization = java.util.Objects.requireNonNull(value, "storedQuantization").strip();
            return this;
        }

        /**
         * The sequence a rotary model's configuration names ({@link TransformerSpec#contextPositions()}; default 0,
         * none stated).
         */
        public Builder contextPositions(long value) {
            Checks.argument(value >= 0 && value <= 1L << 31, "context positions must be in 0..2^31: %s", value);
            this.contextPositions = value;
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
            this.norm = Objects.requireNonNull(value, "norm");
            return this;
        }

        /** Norm before each sub-layer (default true; false: after the residual add, as BERT). */
        public Builder preNorm(boolean value) {
            this.preNorm = value;
            return this;
        }

        /** Biases on every projection (default true): the query/key/value, output and MLP projections. */
        public Builder bias(boolean value) {
            this.qkvBias = value;
            this.outBias = value;
            this.mlpBias = value;
            return this;
        }

        /** Biases on the query, key and value projections (Qwen2's; default {@link #bias}'s). */
        public Builder qkvBias(boolean value) {
            this.qkvBias = value;
            return this;
        }

        /** A bias on the attention's output projection (default {@link #bias}'s). */
        public Builder outBias(boolean value) {
            this.outBias = value;
            return this;
        }

        /** Biases on the MLP's projections (default {@link #bias}'s). */
        public Builder mlpBias(boolean value) {
            this.mlpBias = value;
            return this;
        }

        /** Output projection tied to the input embedding (default true). */
        public Builder tiedEmbeddings(boolean value) {
            this.tied = value;
            return this;
        }

        /**
         * A mixture-of-experts feed-forward in every layer: {@code experts} experts of the dense inner size, each
         * token routed to {@code topK} (Mixtral).
         */
        public Builder experts(int count, int k) {
            this.routed = new int[] {count, k};
            this.moe = null;   // the last of experts and moe is the model's
            this.blocks = null;
            return this;
        }

        /** The mixture of experts (its layers: {@link #blocks}; default every layer when no blocks are given). */
        public Builder moe(Moe value) {
            this.moe = Objects.requireNonNull(value, "moe");
            this.routed = null;   // the last of experts and moe is the model's
            return this;
        }

        /** Multi-head latent attention (DeepSeek). */
        public Builder mla(Mla value) {
            this.mla = Objects.requireNonNull(value, "mla");
            return this;
        }

        /** DeepSeek's sparse attention over the latent attention (DeepSeek-V3.2, GLM-5). */
        public Builder dsa(Dsa value) {
            this.dsa = Objects.requireNonNull(value, "dsa");
            return this;
        }

        /** The Mamba-2 mixer of a hybrid model's Mamba layers. */
        public Builder mamba(Mamba value) {
            this.mamba = Objects.requireNonNull(value, "mamba");
            return this;
        }

        /**
         * The layers in order (default: {@code layers} attention layers, each with a dense MLP of {@link #ffn} or,
         * after {@link #experts}, the experts).
         *
         * @throws IllegalArgumentException when their number differs from the layers given at the start
         */
        public Builder blocks(List<Block> value) {
            java.util.Objects.requireNonNull(value, "blocks");
            value.forEach(x -> java.util.Objects.requireNonNull(x, "a block of blocks"));
            Checks.argument(value.size() == layers, "%s: %s layers described for %s", name, value.size(), layers);
            this.blocks = List.copyOf(value);
            return this;
        }

        /** RMS norms over each head's queries and keys (Qwen3; default false). */
        public Builder qkNorm(boolean value) {
            this.qkNorm = value;
            return this;
        }

        /** A learned attention sink per head (GPT-OSS; default false). */
        public Builder sinks(boolean value) {
            this.sinks = value;
            return this;
        }

        /**
         * A sigmoid gate on the attention's output, per head and channel, projected from the layer's input beside the
         * queries (Qwen3-Next, Qwen3.5; default false).
         */
        public Builder outputGate(boolean value) {
            this.outputGate = value;
            return this;
        }

        /** Dropout on the attention probabilities (default true). */
        public Builder attentionDropout(boolean value) {
            this.attentionDropout = value;
            return this;
        }

        /** Dropout on the embeddings and each sub-layer's output (default true). */
        public Builder hiddenDropout(boolean value) {
            this.hiddenDropout = value;
            return this;
        }

        /**
         * A fused attention core (FlashAttention: scores, softmax and context in one kernel, no score matrix kept,
         * the causal mask's half of the work skipped); default false (the unfused core of Megatron-LM's 2021 runs).
         * Layers with heads wider than {@link #fusedHeadLimit(long)} keep an unfused core.
         */
        public Builder fusedAttention(boolean value) {
            this.fusedAttention = value;
            return this;
        }

        /**
         * The widest head the fused core takes (default {@link #MAX_FUSED_HEAD_SIZE}, 256: FlashAttention's and
         * cuDNN's training kernels, through which Transformer Engine runs it); a layer of wider heads gets an unfused
         * core. {@link #MAX_SIZE} for kernels that take any head: PyTorch's memory-efficient attention (its
         * {@code scaled_dot_product_attention} falls back to it) and FlexAttention.
         *
         * @throws IllegalArgumentException outside 1..{@link #MAX_SIZE}
         */
        public Builder fusedHeadLimit(long value) {
            Checks.argument(value >= 1 && value <= MAX_SIZE, "the widest fused head must be in 1..%s: %s", MAX_SIZE,
                    value);
            this.fusedHeadLimit = value;
            return this;
        }

        /**
         * Multi-token-prediction layers (DeepSeek-V3's {@code num_nextn_predict_layers}; default 0): not part of the
         * graph (nor of {@link #parameterCount}); the Megatron execution counts them where it lays layers out over
         * pipeline stages and, in training, computes each on the last stage as a layer of the last layer's kind and
         * another pass through the output head and loss, with the layer's weights and a copy of the embedding.
         */
        public Builder mtpLayers(int value) {
            this.mtpLayers = value;
            return this;
        }

        /**
         * Group-limited routing (DeepSeek's {@code n_group} and {@code topk_group}; default none): the routed experts
         * in {@code groups} equal groups, a token's experts chosen within {@code picked} of them. It changes no layer's
         * work, but the ranks a token's experts lie on ({@link TransformerShape#routingGroups}), which DeepEP and
         * HybridEP send it to once each.
         */
        public Builder routingGroups(int groups, int picked) {
            this.routingGroups = groups;
            this.groupsPicked = picked;
            return this;
        }

        /**
         * A norm on each sub-layer's output before its residual add, beside the one on its input (Gemma 2, 3 and 4's
         * {@code post_attention_layernorm} and {@code post_feedforward_layernorm}, GLM-4's; default false).
         */
        public Builder sandwichNorm(boolean value) {
            this.sandwichNorm = value;
            return this;
        }

        /**
         * With {@link #qkNorm}: the norms' scales over the whole query and key projections, one a channel (OLMo 2 and
         * 3), not one a head's channel shared by the heads (Qwen3; default false). The same work either way.
         */
        public Builder wholeQkNorm(boolean value) {
            this.wholeQkNorm = value;
            return this;
        }

        /**
         * Attention scores squashed by {@code cap·tanh(x / cap)} before the softmax (Gemma 2's
         * {@code attn_logit_softcapping}; default false): an element-wise pass over the scores where the core is
         * unfused, nothing more where a fused core does it on chip.
         */
        public Builder scoreSoftcap(boolean value) {
            this.scoreSoftcap = value;
            return this;
        }

        /**
         * The output logits squashed by {@code cap·tanh(x / cap)} before the loss (Gemma 2's
         * {@code final_logit_softcapping}; default false): an element-wise pass over the logits.
         */
        public Builder logitSoftcap(boolean value) {
            this.logitSoftcap = value;
            return this;
        }

        /** What reading a configuration assumed or changed ({@link TransformerSpec#readNotes()}; default none). */
        public Builder readNotes(List<String> notes) {
            this.readNotes = List.copyOf(Objects.requireNonNull(notes, "notes"));
            return this;
        }

        /**
         * The specification.
         *
         * @throws IllegalArgumentException naming the model and the size that is out of range
         */
        public TransformerSpec build() {
            Checks.argument(heads > 0 && hidden > 0 && layers > 0, "%s: hidden size, heads and layers must be "
                    + "positive", name);
            // the sizes a configuration reader takes (HuggingFaceConfig): beyond them the products overflow
            Checks.argument(hidden <= MAX_SIZE && heads <= MAX_SIZE && vocab > 0 && vocab <= MAX_VOCAB,
                    "%s: hidden size %s and heads %s must be in 1..%s, the vocabulary %s in 1..%s", name, hidden,
                    heads, MAX_SIZE, vocab, MAX_VOCAB);
            // 0 takes the default; a negative size is a slip, not a choice
            // one message per field, naming the one that is wrong (0 takes the default)
            Checks.argument(kvHeads >= 0, "%s: key/value heads %s must not be negative (0: as many as the attention "
                    + "heads)", name, kvHeads);
            Checks.argument(kvHeads <= heads, "%s: key/value heads %s are more than the %s attention heads (each "
                    + "key/value head serves one or more of them)", name, kvHeads, heads);
            Checks.argument(headDim >= 0 && headDim <= MAX_SIZE, "%s: head size %s must be in 0..%s (0: hidden size "
                    + "over heads)", name, headDim, MAX_SIZE);
            Checks.argument(ffn >= 0 && ffn <= MAX_SIZE, "%s: inner size %s must be in 0..%s (0: the default)", name,
                    ffn, MAX_SIZE);
            Checks.argument(mtpLayers >= 0, "%s: multi-token prediction layers must be 0 or more, got %s", name,
                    mtpLayers);
            long hd = headDim > 0 ? headDim : hidden / heads;
            Checks.argument(headDim > 0 || hidden % heads == 0, "%s: hidden size %s is not a multiple of %s heads; "
                    + "give the head size (head_dim in a Hugging Face configuration)", name, hidden, heads);
            long f = ffn > 0 ? ffn : 4 * hidden;
            if (routed != null) {
                moe = new Moe(routed[0], routed[1], f, 0, false, false, false);
            }
            List<Block> bl = blocks;
            if (bl == null) {
                // (before the list: Integer.MAX_VALUE layers ran out of memory copying it)
                Checks.argument(layers <= MAX_LAYERS, "%s: %s layers: sizes beyond any model (at most %s)", name,
                        layers, MAX_LAYERS);
                Block one = moe != null ? Block.moe() : Block.dense(f);
                bl = Collections.nCopies(layers, one);
            }
            return new TransformerSpec(this, hd, kvHeads > 0 ? kvHeads : heads, f, bl);
        }
    }

    /**
     * Specifications are equal where they build the same layers: the context a rotary configuration names
     * ({@link #contextPositions()}, which the graph's shape carries for a prediction's warnings only) and the notes
     * of its reading are not compared, so a cache keyed by a specification keys layers, not predictions.
     */
    @Override
    public boolean equals(Object o) {
        return o instanceof TransformerSpec t && t.toString().equals(toString()) && t.blocks.equals(blocks)
                && t.mla.equals(mla) && t.dsa.equals(dsa) && t.moe.equals(moe) && t.mamba.equals(mamba)
                && t.qkvBias == qkvBias && t.mtpLayers == mtpLayers && t.outBias == outBias && t.mlpBias == mlpBias
                && t.routingGroups == routingGroups && t.groupsPicked == groupsPicked
                && t.tiedEmbeddings == tiedEmbeddings
                && t.maxPositions == maxPositions && t.typeVocab == typeVocab && t.relativeBuckets == relativeBuckets
                && t.norm == norm && t.preNorm == preNorm && t.qkNorm == qkNorm && t.sinks == sinks
                && t.outputGate == outputGate
                && t.attentionDropout == attentionDropout && t.hiddenDropout == hiddenDropout
                && t.fusedAttention == fusedAttention && t.fusedHeadLimit == fusedHeadLimit && t.headDim == headDim
                && t.sandwichNorm == sandwichNorm
                && t.wholeQkNorm == wholeQkNorm
                && t.scoreSoftcap == scoreSoftcap && t.logitSoftcap == logitSoftcap;
    }

    @Override
    public int hashCode() {
        return Objects.hash(name, hidden, heads, kvHeads, blocks, vocab);
    }

    @Override
    public String toString() {
        return String.format(Locale.ROOT, "%s (%s, h=%d, heads=%d/%d, layers=%d%s, ffn=%d %s, vocab=%d%s%s%s)", name,
                architecture.name().toLowerCase(Locale.ROOT), hidden, heads, kvHeads, blocks.size(),
                decoderLayers > 0 ? "+" + decoderLayers : "", ffn, ffnKind.name().toLowerCase(Locale.ROOT), vocab,
                moe.map(m -> ", " + m.experts() + " experts top-" + m.topK()).orElse(""),
                mla.isPresent() ? dsa.map(d -> ", sparse latent attention top-" + d.topK()).orElse(", latent attention")
                        : "", mamba.isPresent() ? ", Mamba-2 layers" : "");
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
        /** The causal sliding window of the block kind being built, shorter than the sequence; 0 for none. */
        private long window;
        /** The chunk of the block being built's chunked attention (0: none, or one as long as the sequence). */
        private long chunk;

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
            if (window > 0 && kind == LayerRole.Kind.ATTENTION_CORE) {
                // the causal window the core's layers attend within (what packed documents leave of their work)
                l.attribute(Layer.ATTENTION_WINDOW, Attribute.ofInt(window));
            }
            if (chunk > 0 && kind == LayerRole.Kind.ATTENTION_CORE) {
                // the chunk the core's queries attend within (what a serving engine keeps of its keys and values)
                l.attribute(Layer.ATTENTION_CHUNK, Attribute.ofInt(chunk));
            }
            g.layer(l.build());
            g.role(name, new LayerRole(region, kind, block));
        }

        private String op(String name, LayerRole.Kind kind, String type, SymbolicShape out, String... inputs) {
            String y = act(name + ":0", out);
            layer(Layer.builder(name, type).inputs(inputs).outputs(y), name, kind);
            return y;
        }

        /**
         * The layer with its tiles among its tensors kept on chip ({@link Layer#ON_CHIP}) where the model's attention
         * is fused: the sparse-attention indexer's (an attention core's layers ask {@link #tiles(boolean,
         * Layer.Builder, String...)} with the layer's own answer).
         */
        private Layer.Builder tiles(Layer.Builder l, String... onChip) {
            return tiles(m.fusedAttention, l, onChip);
        }

        /** {@link #tiles(Layer.Builder, String...)} for a core that is {@code fused} or not. */
        private static Layer.Builder tiles(boolean fused, Layer.Builder l, String... onChip) {
            return fused ? l.attribute(Layer.ON_CHIP, Attribute.ofStrings(List.of(onChip))) : l;
        }

        /** {@link #op} on a core's tiles (kept on chip where it is {@code fused}): the first input and the output. */
        private String tiled(boolean fused, String name, LayerRole.Kind kind, String type, SymbolicShape out,
                String... inputs) {
            String y = act(name + ":0", out);
            layer(tiles(fused, Layer.builder(name, type).inputs(inputs).outputs(y), inputs[0], y), name, kind);
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
            return norm(name, x, m.hidden, LayerRole.Kind.NORM, m.norm);
        }

        private String norm(String name, String x, long width, LayerRole.Kind kind, Norm type) {
            String y = act(name + ":0", rows(width));
            List<String> in = new ArrayList<>(List.of(x, param(name + ".weight", width)));
            if (type == Norm.LAYER_NORM) {
                in.add(param(name + ".bias", width));
            }
            layer(Layer.builder(name, "LayerNormalization").inputs(in).outputs(y)
                    .attribute("axis", Attribute.ofInt(-1)), name, kind);
            return y;
        }

        ModelGraph build() {
            g.tensor(TensorInfo.of("input_ids", DataType.INT64, SymbolicShape.of(Dim.batch(), Dim.of(s)),
                    TensorRole.INPUT));
            String wte = param("embed.tokens.weight", m.vocab, m.hidden);
            String x = op("embed/tokens", LayerRole.Kind.EMBEDDING, "Gather", rows(m.hidden), wte, "input_ids");
            x = embeddings("embed", x);
            if (m.architecture == Architecture.ENCODER_DECODER) {
                String encoderOut = stack("enc", x, Collections.nCopies(m.blocks.size(), m.blocks.get(0)), false,
                        null);
                region = LayerRole.Region.PROLOGUE;
                String y = op("dec/embed/tokens", LayerRole.Kind.EMBEDDING, "Gather", rows(m.hidden), wte,
                        "input_ids");
                x = stack("dec", y, Collections.nCopies(m.decoderLayers, m.blocks.get(0)), true, encoderOut);
            } else {
                x = stack("layers", x, m.blocks, m.architecture == Architecture.DECODER, null);
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
            if (m.logitSoftcap) {
                // over the vocabulary-parallel logits, as the loss
                logits = op("head/softcap", LayerRole.Kind.LOSS, "Tanh", rows(m.vocab), logits);
            }
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
            return m.hiddenDropout ? op(prefix + "/dropout", LayerRole.Kind.DROPOUT, "Dropout", rows(m.hidden), x) : x;
        }

        /**
         * A stack: each distinct kind of layer written once, in order of first appearance, its kind standing for
         * every layer of that kind.
         */
        private String stack(String prefix, String x, List<Block> layers, boolean causal, String memory) {
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
            int first = pattern.isEmpty() ? 0 : pattern.stream().mapToInt(Integer::intValue).max().orElse(-1) + 1;
            Map<Block, Integer> kinds = new LinkedHashMap<>();
            for (Block bl : layers) {
                pattern.add(first + kinds.computeIfAbsent(bl, k -> kinds.size()));
            }
            String out = x;
            for (Map.Entry<Block, Integer> e : kinds.entrySet()) {
                block = first + e.getValue();
                Block kind = e.getKey();
                window = causal && !kind.chunked() && kind.window() > 0 && kind.window() < s ? kind.window() : 0;
                chunk = causal && kind.chunked() && kind.window() < s ? kind.window() : 0;
                String b = kinds.size() == 1 ? prefix + "/block" : prefix + "/block" + e.getValue();
                out = layer(b, x, kind, causal, memory, relative);
            }
            region = LayerRole.Region.EPILOGUE;
            block = -1;
            window = 0;
            chunk = 0;
            if (m.architecture == Architecture.ENCODER_DECODER && m.preNorm) {
                out = norm(prefix + "/final_norm", out);
            }
            return out;
        }

        /** One layer of a kind: its mixer and its feed-forward, each with its norm and residual add. */
        private String layer(String b, String x, Block kind, boolean causal, String memory, String relative) {
            String y = x;
            switch (kind.mixer()) {
                case ATTENTION -> {
                    y = attention(b + "/attn", y, null, relative, causal, kind);
                    if (memory != null) {
                        y = attention(b + "/cross", y, memory, null, false, kind);
                    }
                }
                case MAMBA -> y = mamba(b + (m.mamba.orElseThrow().deltaRule() ? "/deltanet" : "/mamba"), y);
                case NONE -> {
                }
            }
            return switch (kind.ffn()) {
                case DENSE -> feedForward(b + "/ffn", y, kind.ffnSize());
                case MOE -> experts(b + "/ffn", y);
                case NONE -> y;
            };
        }

        /**
         * The keys each query attends to on average (what a fused core computes): half a causal sequence, a causal
         * window's {@code w - w²/2s}, the window of a non-causal one.
         */
        private long keys(boolean causal, Block kind, boolean fused) {
            if (m.dsa.isPresent() && causal) {
                // the indexer's top-k keys of each query (an unfused core too reads only those)
                return m.dsa.get().causalKeys(s);
            }
            if (!fused) {
                return s;
            }
            long span = kind.window() > 0 ? Math.min(kind.window(), s) : s;
            if (kind.chunked()) {
                // within each chunk a causal triangle
                return Math.max(1, (span + 1) / 2);
            }
            if (kind.window() > 0 && kind.window() < s) {
                // a causal window: query i attends min(i, w) keys, about w - w^2 / 2s on average (half the sequence
                // at w = s, as without a window; the window alone counted up to twice the causal core's work), as
                // a sparse attention reading at most w keys does
                return causal ? TransformerShape.sparseCausalKeys(s, span) : span;
            }
            return causal ? Math.max(1, (s + 1) / 2) : s;
        }

        /**
         * Attention sub-layer with its norm and residual add: self-attention ({@code memory} null) or cross-attention
         * over an encoder's output; {@code relative} the stack's position bias, if any.
         */
        private String attention(String p, String x, String memory, String relative, boolean causal, Block kind) {
            String in = m.preNorm ? norm(p + "/norm", x) : x;
            long hd = kind.headDim() > 0 ? kind.headDim() : m.headDim;
            long kvHeads = kind.kvHeads() > 0 ? kind.kvHeads() : m.kvHeads;
            long qk = m.mla.map(a -> a.qkNopeDim() + a.qkRopeDim()).orElse(hd);
            long vd = m.mla.map(Mla::vDim).orElse(hd);
            long q = m.heads * qk;
            long kv = kvHeads * hd;
            // no fused kernel trains heads wider than FlashAttention's and cuDNN's (Gemma 4's 512-wide global
            // layers): Transformer Engine runs those cores unfused, their scores in memory
            boolean fused = m.fusedAttention && m.headWidth(kind) <= m.fusedHeadLimit;
            // keys serving as values: one projection for both (the split reads the values from the keys; the norms
            // and rotations below still write the three, Gemma 4's values normed apart from its keys)
            long kvProjected = kind.keysAsValues() ? kv : 2 * kv;
            String c = p + "/core";
            String gate = null;
            Layer.Builder split = Layer.builder(c + "/split", "Split").outputs(c + "/q:0", c + "/kT:0", c + "/v:0");
            if (kind.headDim() > 0 || kind.kvHeads() > 0 || kind.keysAsValues()) {
                // keys and values of the layer's own geometry: what a kept or recomputed core saves of them, and
                // what context parallelism exchanges, are its own
                split.attribute(Layer.KEY_VALUE_HEADS, Attribute.ofInts(kvHeads, hd));
            }
            if (m.mla.isPresent()) {
                String[] projections = latent(p, in);
                // Megatron-Core's fused MLA rope kernels read the query and key/value projections and write the
                // queries, keys and values in the attention's layout in one pass: with a fused core that kernel is
                // the split; unfused, the rotated projections are concatenated and split again
                split.inputs(fused ? projections : new String[] {op(p + "/rope", LayerRole.Kind.QKV,
                        "Concat", rows(m.heads * (2 * qk + vd)), projections)});
            } else if (memory == null) {
                // an output gate is projected with the queries, keys and values, one value a head's channel
                String qkv = linear(p + "/qkv", LayerRole.Kind.QKV, in, m.hidden, q + kvProjected
                        + (m.outputGate ? m.heads * vd : 0), m.qkvBias);
                if (m.outputGate) {
                    gate = act(p + "/gate:0", rows(m.heads * vd));
                    split.outputs(c + "/q:0", c + "/kT:0", c + "/v:0", gate);
                }
                if (m.qkNorm) {
                    // RMS norms over each head's queries and keys, one scale vector for all query heads, one for keys
                    String y = act(p + "/qk_norm:0", rows(q + 2 * kv));
                    layer(Layer.builder(p + "/qk_norm", "LayerNormalization").inputs(qkv, param(p + ".q_norm.weight",
                            m.wholeQkNorm ? q : hd), param(p + ".k_norm.weight", m.wholeQkNorm ? kv : hd)).outputs(y)
                            .attribute("axis", Attribute.ofInt(-1)), p + "/qk_norm", LayerRole.Kind.QKV);
                    qkv = y;
                }
                if (m.maxPositions == 0 && m.relativeBuckets == 0) {
                    // rotary embeddings of queries and keys: element-wise rotations
                    qkv = op(p + "/rope", LayerRole.Kind.QKV, "Mul", rows(q + 2 * kv), qkv, qkv);
                }
                split.inputs(qkv);
            } else {
                split.inputs(linear(p + "/q", LayerRole.Kind.QKV, in, m.hidden, q, m.qkvBias), linear(p + "/kv",
                        LayerRole.Kind.QKV, memory, m.hidden, kvProjected, m.qkvBias));
            }
            long keys = keys(causal, kind, fused);
            act(c + "/q:0", perHead(m.heads, s, qk));
            act(c + "/kT:0", perHead(m.heads, qk, keys));
            act(c + "/v:0", perHead(m.heads, keys, vd));
            LayerRole.Kind core = LayerRole.Kind.ATTENTION_CORE;
            layer(split, c + "/split", core);
            // a fused core keeps the scores and probabilities on chip, tile by tile, and its backward pass
            // recomputes the scores from the queries and keys: five products where the unfused core does four
            String scores = act(c + "/scores:0", perHead(m.heads, s, keys));
            Layer.Builder product = tiles(fused, Layer.builder(c + "/scores", "MatMul").inputs(c + "/q:0", c + "/kT:0")
                    .outputs(scores), scores);
            if (fused) {
                product.attribute(Layer.RECOMPUTED_IN_BACKWARD, Attribute.ofInt(1));
            }
            layer(product, c + "/scores", core);
            if (relative != null) {
                scores = tiled(fused, c + "/add_bias", core, "Add", perHead(m.heads, s, s), scores, relative);
            }
            if (m.scoreSoftcap && !fused) {
                // a fused core caps its tiles on chip; an unfused one passes over the scores
                scores = op(c + "/softcap", core, "Tanh", perHead(m.heads, s, keys), scores);
            }
            String probs;
            if (fused) {
                // the softmax runs on chip, tile by tile: what reaches memory is each row's statistics (its maximum
                // and sum, joined by the sinks), and the context product takes the tiles of the scores directly
                String rows = act(c + "/row_max:0", perHead(m.heads, s, 1));
                layer(Layer.builder(c + "/row_max", "ReduceMax").inputs(c + "/q:0").outputs(rows)
                        .attribute("axes", Attribute.ofInts(-1)), c + "/row_max", core);
                String stats = act(c + "/softmax:0", perHead(m.heads, s, 1));
                Layer.Builder sm = Layer.builder(c + "/softmax", "Softmax").outputs(stats);
                sm.inputs(m.sinks ? List.of(rows, param(c + ".sinks", m.heads)) : List.of(rows));
                if (!causal || memory != null) {
                    // (a fused encoder's too: what tells an encoder's self-attention from a decoder's)
                    sm.attribute(Layer.PADDING_MASK, Attribute.ofInt(1));
                }
                layer(sm, c + "/softmax", core);
                probs = scores;
            } else {
                String sm = act(c + "/softmax:0", perHead(m.heads, s, keys));
                Layer.Builder soft = Layer.builder(c + "/softmax", "Softmax").inputs(scores).outputs(sm);
                if (!causal || memory != null) {
                    soft.attribute(Layer.PADDING_MASK, Attribute.ofInt(1));
                }
                layer(soft, c + "/softmax", core);
                probs = sm;
            }
            if (m.attentionDropout) {
                probs = tiled(fused, c + "/dropout", core, "Dropout", perHead(m.heads, s, keys), probs);
            }
            String ctx = act(c + "/context:0", perHead(m.heads, s, vd));
            layer(tiles(fused, Layer.builder(c + "/context", "MatMul").inputs(probs, c + "/v:0").outputs(ctx), probs),
                    c + "/context", core);
            // a fused core writes its context in the sequence-major layout the output projection reads (a view);
            // an unfused one's context is transposed back from its heads
            String merged = op(p + "/merge_heads", LayerRole.Kind.ATTENTION_OUT, fused ? "Reshape"
                    : "Transpose", rows(m.heads * vd), ctx);
            if (gate != null) {
                String sig = op(p + "/output_gate_act", LayerRole.Kind.ATTENTION_OUT, "Sigmoid", rows(m.heads * vd),
                        gate);
                merged = op(p + "/output_gate", LayerRole.Kind.ATTENTION_OUT, "Mul", rows(m.heads * vd), merged, sig);
            }
            String out = linear(p + "/out", LayerRole.Kind.ATTENTION_OUT, merged, m.heads * vd, m.hidden, m.outBias);
            return residual(p, x, out);
        }

        /**
         * Multi-head latent attention's projections: the query (through its low-rank latent and norm, or directly),
         * the key/value latent with the shared rotary key, its norm and the per-head decompression; the down
         * projections are replicated over the tensor-parallel ranks. Returns the query's and the keys' and values'
         * projections, which the rotary embedding joins into the attention's queries, keys and values.
         */
        private String[] latent(String p, String in) {
            Mla a = m.mla.orElseThrow();
            long qHead = a.qkNopeDim() + a.qkRopeDim();
            String qOut;
            String qLatent = null;
            if (a.qLoraRank() > 0) {
                String qa = linear(p + "/q_a", LayerRole.Kind.LATENT, in, m.hidden, a.qLoraRank(), m.qkvBias);
                qa = norm(p + "/q_a_norm", qa, a.qLoraRank(), LayerRole.Kind.LATENT, Norm.RMS_NORM);
                qLatent = qa;
                qOut = linear(p + "/q_b", LayerRole.Kind.QKV, qa, a.qLoraRank(), m.heads * qHead, false);
            } else {
                qOut = linear(p + "/q", LayerRole.Kind.QKV, in, m.hidden, m.heads * qHead, false);
            }
            String kva = linear(p + "/kv_a", LayerRole.Kind.LATENT, in, m.hidden, a.kvLoraRank() + a.qkRopeDim(),
                    m.qkvBias);
            String kvn = norm(p + "/kv_a_norm", kva, a.kvLoraRank(), LayerRole.Kind.LATENT, Norm.RMS_NORM);
            String kvb = linear(p + "/kv_b", LayerRole.Kind.QKV, kvn, a.kvLoraRank(), m.heads * (a.qkNopeDim()
                    + a.vDim()), false);
            if (m.dsa.isEmpty()) {
                return new String[] {qOut, kvb};
            }
            return new String[] {qOut, kvb, indexer(p + "/indexer", in, qLatent)};
        }

        /**
         * DeepSeek's lightning indexer: its queries from the query latent (or the layer's input), one shared key with
         * its LayerNorm and a weight per head from the input; per head the dot products with every earlier key, their
         * ReLU weighted and summed over the heads on chip, so what reaches memory is each query's logit per key; and
         * the top-k keys of each query, which the attention's split gathers.
         */
        private String indexer(String p, String in, String qLatent) {
            Dsa d = m.dsa.orElseThrow();
            Mla a = m.mla.orElseThrow();
            // Megatron's indexer is replicated over the tensor-parallel ranks, its projections as the latent ones
            String q = qLatent != null ? linear(p + "/q", LayerRole.Kind.LATENT, qLatent, a.qLoraRank(),
                    d.heads() * d.headDim(), false) : linear(p + "/q", LayerRole.Kind.LATENT, in, m.hidden,
                    d.heads() * d.headDim(), false);
            String k = linear(p + "/k", LayerRole.Kind.LATENT, in, m.hidden, d.headDim(), false);
            k = norm(p + "/k_norm", k, d.headDim(), LayerRole.Kind.LATENT, Norm.LAYER_NORM);
            String w = linear(p + "/weights", LayerRole.Kind.LATENT, in, m.hidden, d.heads(), false);
            long keys = Math.max(1, (s + 1) / 2);
            LayerRole.Kind core = LayerRole.Kind.INDEXER;
            layer(Layer.builder(p + "/split", "Split").inputs(q, k).outputs(p + "/q_heads:0", p + "/kT:0"),
                    p + "/split", core);
            act(p + "/q_heads:0", perHead(d.heads(), s, d.headDim()));
            // one key a token, shared by the heads
            act(p + "/kT:0", perHead(1, d.headDim(), keys));
            String scores = act(p + "/scores:0", perHead(d.heads(), s, keys));
            layer(tiles(Layer.builder(p + "/scores", "MatMul").inputs(p + "/q_heads:0", p + "/kT:0")
                    .outputs(scores), scores), p + "/scores", core);
            String logits = act(p + "/logits:0", perHead(1, s, keys));
            layer(tiles(Layer.builder(p + "/logits", "ReduceSum").inputs(scores, w).outputs(logits), scores)
                    .attribute("axes", Attribute.ofInts(1)), p + "/logits", core);
            String top = act(p + "/top_k:0", perHead(1, s, Math.min(d.topK(), s)));
            layer(Layer.builder(p + "/top_k", "TopK").inputs(logits).outputs(top)
                    .attribute("k", Attribute.ofInt(Math.min(d.topK(), s))), p + "/top_k", core);
            return top;
        }

        /** Dense feed-forward sub-layer with its norm and residual add. */
        private String feedForward(String p, String x, long size) {
            String in = m.preNorm ? norm(p + "/norm", x) : x;
            String out = mlp(p, in, size, m.mlpBias);
            return residual(p, x, out);
        }

        private String mlp(String p, String in, long size, boolean bias) {
            long up = m.ffnKind.gated() ? 2 * size : size;
            String u = linear(p + "/up", LayerRole.Kind.MLP_IN, in, m.hidden, up, bias);
            String h = activation(p, LayerRole.Kind.MLP_ACT, u, rows(size));
            return linear(p + "/down", LayerRole.Kind.MLP_OUT, h, size, m.hidden, bias);
        }

        /** A sub-layer's output (its norm first, with sandwich norms), its dropout and the residual add. */
        private String residual(String p, String x, String out) {
            if (m.sandwichNorm) {
                out = norm(p + "/out_norm", out);
            }
            String o = m.hiddenDropout ? op(p + "/dropout", LayerRole.Kind.DROPOUT, "Dropout", rows(m.hidden), out)
                    : out;
            String y = op(p + "/residual", LayerRole.Kind.RESIDUAL, "Add", rows(m.hidden), x, o);
            return m.preNorm ? y : norm(p + "/post_norm", y);
        }

        /**
         * The mixture-of-experts sub-layer: the router, the dispatch of each token to its top-k experts, the
         * experts' grouped GEMMs (each expert given its share of the routed tokens), the combination, and the shared
         * experts beside them.
         */
        private String experts(String p, String x) {
            Moe e = m.moe.orElseThrow();
            String in = m.preNorm ? norm(p + "/norm", x) : x;
            String routerIn = in;
            String expertsIn = in;
            if (e.branchNorms()) {
                // the router's norm (its scale per channel) and the experts' input norm, beside the shared MLP's
                routerIn = norm(p + "/router_norm", x);
                expertsIn = norm(p + "/experts_norm", x);
            }
            String router = linear(p + "/router", LayerRole.Kind.ROUTER, routerIn, m.hidden, e.experts(),
                    e.routerBias());
            if (e.branchNorms()) {
                router = op(p + "/router/expert_scale", LayerRole.Kind.ROUTER, "Mul", rows(e.experts()), router,
                        param(p + ".router.expert_scale", e.experts()));
            }
            if (e.scoreBias()) {
                g.tensor(TensorInfo.of(p + "/router.score_bias", DataType.FLOAT, SymbolicShape.ofStatic(e.experts()),
                        TensorRole.PARAMETER));
                op(p + "/router/select", LayerRole.Kind.ROUTER, "Add", rows(e.experts()), router,
                        p + "/router.score_bias");
            }
            long perExpert = Math.max(1, Math.round((double) e.topK() * s / e.experts()));
            long up = m.ffnKind.gated() ? 2 * e.expertFfn() : e.expertFfn();
            long width = e.latent() > 0 ? e.latent() : m.hidden;
            String toExperts = expertsIn;
            if (e.latent() > 0) {
                toExperts = linear(p + "/latent_in", LayerRole.Kind.LATENT, in, m.hidden, e.latent(), false);
            }
            SymbolicShape tokens = SymbolicShape.of(Dim.of(e.experts()), new Dim(perExpert, 0), Dim.of(width));
            // the permutation of each token's top-k copies into the experts' order (and back, in the combination)
            String routed = op(p + "/dispatch", LayerRole.Kind.EXPERT_DISPATCH, "Tile", tokens, toExperts);
            String w1 = param(p + ".experts.up.weight", e.experts(), width, up);
            SymbolicShape upShape = SymbolicShape.of(Dim.of(e.experts()), new Dim(perExpert, 0), Dim.of(up));
            String u;
            if (e.expertBias()) {
                u = act(p + "/experts/up:0", upShape);
                layer(Layer.builder(p + "/experts/up", "MatMul").inputs(routed, w1, param(p + ".experts.up.bias",
                        e.experts(), up)).outputs(u), p + "/experts/up", LayerRole.Kind.EXPERT_IN);
            } else {
                u = op(p + "/experts/up", LayerRole.Kind.EXPERT_IN, "MatMul", upShape, routed, w1);
            }
            String h = activation(p + "/experts", LayerRole.Kind.EXPERT_ACT, u, SymbolicShape.of(Dim.of(e.experts()),
                    new Dim(perExpert, 0), Dim.of(e.expertFfn())));
            String w2 = param(p + ".experts.down.weight", e.experts(), e.expertFfn(), width);
            String d = op(p + "/experts/down", LayerRole.Kind.EXPERT_OUT, "MatMul", tokens, h, w2);
            if (e.expertBias()) {
                // Megatron core adds the down projection's bias outside its GEMM (skip_bias_add): each local expert's
                // bias times the router's probabilities of its rows (a tensor of the rows' size), added to the rows
                // into a tensor of its own, and the experts' results concatenated again before the combination: 6
                // widths of the hidden size moved
                String weighted = act(p + "/experts/down_bias_prob:0", tokens);
                layer(groupedMlp(Layer.builder(p + "/experts/down_bias_prob", "Mul").inputs(
                        param(p + ".experts.down.bias", e.experts(), width)).outputs(weighted), true),
                        p + "/experts/down_bias_prob", LayerRole.Kind.EXPERT_COMBINE);
                String biased = act(p + "/experts/down_bias:0", tokens);
                layer(groupedMlp(Layer.builder(p + "/experts/down_bias", "Add").inputs(d, weighted)
                        .outputs(biased), true), p + "/experts/down_bias", LayerRole.Kind.EXPERT_COMBINE);
                d = act(p + "/experts/down_cat:0", tokens);
                layer(groupedMlp(Layer.builder(p + "/experts/down_cat", "Concat").inputs(biased).outputs(d), true),
                        p + "/experts/down_cat", LayerRole.Kind.EXPERT_COMBINE);
            }
            String out = op(p + "/combine", LayerRole.Kind.EXPERT_COMBINE, "ReduceSum", rows(width), d);
            if (e.latent() > 0) {
                out = linear(p + "/latent_out", LayerRole.Kind.LATENT, out, e.latent(), m.hidden, false);
            }
            if (e.sharedFfn() > 0) {
                String shared = mlp(p + "/shared", in, e.sharedFfn(), false);
                if (e.branchNorms()) {
                    shared = norm(p + "/shared_out_norm", shared);
                    out = norm(p + "/experts_out_norm", out);
                }
                out = op(p + "/add_shared", LayerRole.Kind.MLP_OUT, "Add", rows(m.hidden), out, shared);
            }
            return residual(p, x, out);
        }

        /**
         * A Mamba-2 mixer with its norm and residual add: the input projection (the gate, the inner stream, B, C and
         * the step sizes), the causal depthwise convolution, the chunked scan, the gated norm and the output
         * projection. The scan's products per chunk of length {@code L} and head (state {@code N}, head dimension
         * {@code P}), as the chunked kernels run them: Mamba-2's {@code C·Bᵀ} over each group ({@code 2L²N}), the masked
         * product with the inputs ({@code 2L²P}), the chunk's state and its output from the states before it
         * ({@code 4LNP}); a Gated DeltaNet's (the delta rule, chunked as flash-linear-attention runs it) the keys'
         * product with themselves and the queries' with the keys ({@code 2L²N} each), the triangular system's solution
         * applied to keys and values ({@code 2L²(N + P)}), the masked product with the corrected values ({@code 2L²P})
         * and the state's three products, its correction of the values, the queries' read of it and its update
         * ({@code 6LNP}). The products after the first are recomputed by the backward pass (the kernels keep the
         * chunk's matrix, not the states). Not counted: the triangular solve itself ({@code L³/3} a chunk and head).
         */
        private String mamba(String p, String x) {
            Mamba mb = m.mamba.orElseThrow();
            String in = m.preNorm ? norm(p + "/norm", x) : x;
            long inner = mb.inner();
            long convDim = inner + 2 * mb.groups() * mb.stateSize();
            String proj = linear(p + "/in", LayerRole.Kind.MIXER_IN, in, m.hidden, inner + convDim
                    + (mb.deltaRule() ? 2 : 1) * mb.heads(), mb.projBias());
            String convW = param(p + ".conv.weight", convDim, 1, mb.convKernel());
            List<String> convIn = new ArrayList<>(List.of(proj, convW));
            if (mb.convBias()) {
                convIn.add(param(p + ".conv.bias", convDim));
            }
            String conv = act(p + "/conv:0", rows(convDim));
            layer(Layer.builder(p + "/conv", "Mul").inputs(convIn).outputs(conv), p + "/conv",
                    LayerRole.Kind.MIXER_CORE);
            String siluOut = op(p + "/conv_act", LayerRole.Kind.MIXER_CORE, "Sigmoid", rows(convDim), conv);
            g.tensor(TensorInfo.of(p + ".a_log", DataType.FLOAT, SymbolicShape.ofStatic(mb.heads()),
                    TensorRole.PARAMETER));
            g.tensor(TensorInfo.of(p + ".d", DataType.FLOAT, SymbolicShape.ofStatic(mb.heads()), TensorRole.PARAMETER));
            g.tensor(TensorInfo.of(p + ".dt_bias", DataType.FLOAT, SymbolicShape.ofStatic(mb.heads()),
                    TensorRole.PARAMETER));
            long chunk = Math.min(mb.chunk(), s);
            long chunks = Math.max(1, (s + chunk - 1) / chunk);
            String xs = act(p + "/scan/x:0", SymbolicShape.of(new Dim(chunks, 0), Dim.of(mb.heads()), Dim.of(chunk),
                    Dim.of(chunk)));
            layer(Layer.builder(p + "/scan/mask", "Mul").inputs(siluOut, p + ".a_log", p + ".dt_bias").outputs(xs),
                    p + "/scan/mask", LayerRole.Kind.MIXER_CORE);
            String xv = act(p + "/scan/v:0", SymbolicShape.of(new Dim(chunks, 0), Dim.of(mb.heads()), Dim.of(chunk),
                    Dim.of(mb.headDim())));
            layer(Layer.builder(p + "/scan/values", "Reshape").inputs(siluOut).outputs(xv), p + "/scan/values",
                    LayerRole.Kind.MIXER_CORE);
            String scanned = act(p + "/scan:0", SymbolicShape.of(new Dim(chunks, 0), Dim.of(mb.heads()),
                    Dim.of(chunk), Dim.of(mb.headDim())));
            layer(Layer.builder(p + "/scan", "MatMul").inputs(xs, xv).outputs(scanned), p + "/scan",
                    LayerRole.Kind.MIXER_CORE);
            Dim c = new Dim(chunks, 0);
            long n = mb.stateSize();
            long hd = mb.headDim();
            long h = mb.heads();
            if (mb.deltaRule()) {
                // the keys (and queries) over every value head, by the chunk
                String k = view(p + "/scan/keys", siluOut, c, h, chunk, n);
                String kT = view(p + "/scan/keys_t", siluOut, c, h, n, chunk);
                String kk = act(p + "/scan/kk:0", SymbolicShape.of(c, Dim.of(h), Dim.of(chunk), Dim.of(chunk)));
                scanProduct(p + "/scan/kk", k, kT, kk);
                String qk = act(p + "/scan/qk:0", SymbolicShape.of(c, Dim.of(h), Dim.of(chunk), Dim.of(chunk)));
                scanProduct(p + "/scan/qk", k, kT, qk);
                String kv = view(p + "/scan/keys_values", siluOut, c, h, chunk, n + hd);
                String wu = act(p + "/scan/wu:0", SymbolicShape.of(c, Dim.of(h), Dim.of(chunk), Dim.of(n + hd)));
                scanProduct(p + "/scan/wu", kk, kv, wu);
                // the state's correction of the values, the queries' read of it and its update
                stateProducts(p, siluOut, c, h, 3 * chunk, n, hd);
            } else {
                String cg = view(p + "/scan/c", siluOut, c, mb.groups(), chunk, n);
                String bT = view(p + "/scan/b_t", siluOut, c, mb.groups(), n, chunk);
                String cb = act(p + "/scan/cb:0", SymbolicShape.of(c, Dim.of(mb.groups()), Dim.of(chunk),
                        Dim.of(chunk)));
                scanProduct(p + "/scan/cb", cg, bT, cb);
                // the chunk's state, and its output from the states before it
                stateProducts(p, siluOut, c, h, 2 * chunk, n, hd);
            }
            String skip = op(p + "/skip", LayerRole.Kind.MIXER_CORE, "Mul", rows(inner), scanned, p + ".d");
            String normed = norm(p + "/gated_norm", skip, inner, LayerRole.Kind.MIXER_CORE, Norm.RMS_NORM);
            String gated = op(p + "/gate", LayerRole.Kind.MIXER_CORE, "Mul", rows(inner), normed, proj);
            String out = linear(p + "/out", LayerRole.Kind.MIXER_OUT, gated, inner, m.hidden, mb.projBias());
            return residual(p, x, out);
        }

        /** A view of {@code x} as {@code [chunks, heads, rows, cols]} for the scan's products (no work, no bytes). */
        private String view(String name, String x, Dim chunks, long heads, long rows, long cols) {
            return op(name, LayerRole.Kind.MIXER_CORE, "Reshape", SymbolicShape.of(chunks, Dim.of(heads),
                    Dim.of(rows), Dim.of(cols)), x);
        }

        /**
         * A chunked scan's products with its state ({@code n} by {@code hd} a head): {@code rows} rows a chunk and
         * head, each a product of the state's size.
         */
        private void stateProducts(String p, String x, Dim chunks, long heads, long rows, long n, long hd) {
            String r = view(p + "/scan/state_rows", x, chunks, heads, rows, n);
            String state = view(p + "/scan/state", x, chunks, heads, n, hd);
            String out = act(p + "/scan/states:0", SymbolicShape.of(chunks, Dim.of(heads), Dim.of(rows), Dim.of(hd)));
            scanProduct(p + "/scan/states", r, state, out);
        }

        /**
         * One of a chunked scan's products after its first ({@link #mamba}): its operands and result stay in the
         * kernel's tiles, and the backward pass recomputes it.
         */
        private void scanProduct(String name, String a, String b, String out) {
            layer(Layer.builder(name, "MatMul").inputs(a, b).outputs(out)
                    .attribute(Layer.ON_CHIP, Attribute.ofStrings(List.of(a, b, out)))
                    .attribute(Layer.RECOMPUTED_IN_BACKWARD, Attribute.ofInt(1)), name, LayerRole.Kind.MIXER_CORE);
        }

        private String activation(String p, LayerRole.Kind kind, String u, SymbolicShape out) {
            return switch (m.ffnKind) {
                case GELU -> op(p + "/act", kind, "Gelu", out, u);
                case RELU -> op(p + "/act", kind, "Relu", out, u);
                case RELU2 -> fused(p, kind, "Relu", "/square", out, u);
                case SWIGLU -> fused(p, kind, "Sigmoid", "/gate", out, u);
                case CLAMPED_SWIGLU -> fused(p, kind, "Sigmoid", "/gate", out, clamped(p, kind, u, out));
                case GATED_GELU -> fused(p, kind, "Gelu", "/gate", out, u);
            };
        }

        /**
         * The clamps of {@link FfnKind#CLAMPED_SWIGLU} as Megatron core runs them: each half of the projection's output
         * clamped into a tensor of its own (2 widths of the result {@code out} read, 2 written) and the halves
         * concatenated again for the gated kernel (2 read, 2 written).
         */
        private String clamped(String p, LayerRole.Kind kind, String u, SymbolicShape out) {
            List<Dim> dims = new ArrayList<>(out.dims());
            Dim last = dims.get(dims.size() - 1);
            dims.set(dims.size() - 1, new Dim(2 * last.perBatch(), 2 * last.constant()));
            SymbolicShape both = SymbolicShape.of(dims);
            String c = act(p + "/clamp:0", both);
            layer(groupedMlp(Layer.builder(p + "/clamp", "Clip").inputs(u).outputs(c), kind.expert()), p + "/clamp",
                    kind);
            String y = act(p + "/clamp_cat:0", both);
            layer(groupedMlp(Layer.builder(p + "/clamp_cat", "Concat").inputs(c).outputs(y), kind.expert()),
                    p + "/clamp_cat", kind);
            return y;
        }

        /** The layer marked {@link Layer#FUSED_GROUPED_MLP} where it is one of routed experts. */
        private static Layer.Builder groupedMlp(Layer.Builder l, boolean expert) {
            return expert ? l.attribute(Layer.FUSED_GROUPED_MLP, Attribute.ofInt(1)) : l;
        }

        /**
         * A gated (or squared) activation as Megatron runs it, one fused kernel (its {@code bias_swiglu},
         * {@code bias_geglu}, Transformer Engine's {@code swiglu}/{@code srelu}): the projection's output read once,
         * the result written once; the two layers keep the graph's operators, the intermediate and the second read of
         * the projection kept on chip ({@link Layer#ON_CHIP}). Unfused, the pair moved 7 widths of the result where
         * the kernel moves 3 (SwiGLU), 5 where it moves 2 (squared ReLU).
         */
        private String fused(String p, LayerRole.Kind kind, String type, String second, SymbolicShape out, String u) {
            String a = act(p + "/act:0", out);
            layer(Layer.builder(p + "/act", type).inputs(u).outputs(a)
                    .attribute(Layer.ON_CHIP, Attribute.ofStrings(List.of(a))), p + "/act", kind);
            String y = act(p + second + ":0", out);
            layer(Layer.builder(p + second, "Mul").inputs(a, u).outputs(y)
                    .attribute(Layer.ON_CHIP, Attribute.ofStrings(List.of(a, u))), p + second, kind);
            return y;
        }
    }
}
