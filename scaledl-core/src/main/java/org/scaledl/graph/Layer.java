package org.scaledl.graph;

import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.TreeMap;
import org.scaledl.Checks;

/**
 * One node of a {@link ModelGraph}: an operator application (ONNX {@code NodeProto}). Inputs and outputs are tensor
 * names; an empty input name marks an omitted optional input, as in ONNX. Shapes live in the graph
 * ({@link ModelGraph#tensor(String)}), so a layer is a plain immutable value.
 *
 * <pre>{@code
 * Layer conv = Layer.builder("/conv1/Conv", "Conv")
 *         .inputs("input", "conv1.weight").outputs("/conv1/Conv_output_0")
 *         .attribute("strides", Attribute.ofInts(2, 2)).build();
 * }</pre>
 */
public final class Layer {
    /**
     * The attribute (strings) naming those of a layer's input and output tensors that never reach the device's
     * memory: the tiles a fused kernel keeps on chip (FlashAttention's scores and probabilities between its two
     * products). Their bytes are not moved, forward or backward.
     */
    public static final String ON_CHIP = "scaledl_on_chip";

    /**
     * The attribute (an integer, 1) marking a layer whose backward pass repeats its forward pass first: FlashAttention
     * recomputes the scores from the queries and keys instead of reading them back.
     */
    public static final String RECOMPUTED_IN_BACKWARD = "scaledl_recomputed";

    /**
     * The attribute (an integer, 1) marking an unfused attention core's softmax whose scores are masked by padding,
     * not causally (an encoder's self-attention, a decoder's cross-attention): Megatron's fused softmax kernel takes
     * such scores on other conditions. Absent: a causal mask.
     */
    public static final String PADDING_MASK = "scaledl_padding_mask";

    /**
     * The attribute (an integer, 1) marking a layer of a mixture of experts that Megatron core runs as an operation of
     * its own but Transformer Engine's fused grouped MLP folds into its kernels where it has them: on Blackwell's
     * data-centre parts (compute capability 10) with MX-FP8 or NVFP4 scaling (its op fuser, which Megatron-Bridge's
     * MX-FP8 recipe of GPT-OSS 120B enables). GPT-OSS's clamps and its experts' separate bias addition.
     */
    public static final String FUSED_GROUPED_MLP = "scaledl_fused_grouped_mlp";

    /**
     * The attribute (two integers: heads, head size) of an attention core's split whose layer has keys and values of
     * its own geometry, not the model's (Gemma 4's full-attention layers): a token's keys and values are
     * {@code 2·heads·size} elements, what a fused or recomputed core keeps of them and what context parallelism
     * exchanges.
     */
    public static final String KEY_VALUE_HEADS = "scaledl_kv_heads";

    /**
     * The attribute (an integer, tokens) of an attention core's layers whose queries attend causally within a sliding
     * window shorter than the sequence: what packed documents leave of their work is the keys such a window reads
     * within a document over those it reads within the sequence.
     */
    public static final String ATTENTION_WINDOW = "scaledl_window";

    /**
     * The attribute (an integer, tokens) of an attention core's layers whose queries attend causally within fixed
     * chunks of the sequence (Llama 4's chunked attention): a query reads the keys of its own chunk alone.
     */
    public static final String ATTENTION_CHUNK = "scaledl_chunk";

    private final String name;
    private final String opType;
    private final String domain;
    private final java.util.SortedMap<String, Attribute> attributes;
    private final List<String> inputs;
    private final List<String> outputs;

    private Layer(Builder b) {
        this.name = b.name;
        this.opType = b.opType;
        this.domain = b.domain;
        this.attributes = Collections.unmodifiableSortedMap(new TreeMap<>(b.attributes));
        this.inputs = List.copyOf(b.inputs);
        this.outputs = List.copyOf(b.outputs);
    }

    /** Starts a layer with a unique node name and an operator type such as {@code "Conv"}. */
    public static Builder builder(String name, String opType) {
        return new Builder(name, opType);
    }

    /** Node name, unique in its graph. */
    public String name() {
        return name;
    }

    /** Operator type, e.g. {@code "Conv"}. */
    public String opType() {
        return opType;
    }

    /** Operator domain; empty for the default ONNX domain. */
    public String domain() {
        return domain;
    }

    /** Attributes by name, sorted. */
    public Map<String, Attribute> attributes() {
        return attributes;
    }

    /** One attribute, if present. */
    public Optional<Attribute> attribute(String attributeName) {
        return Optional.ofNullable(attributes.get(attributeName));
    }

    /** An integer attribute, or a default. */
    public long longAttribute(String attributeName, long defaultValue) {
        Attribute a = attributes.get(attributeName);
        return a == null ? defaultValue : a.asLong();
    }

    /** Input tensor names in operator order; {@code ""} marks an omitted optional input. */
    public List<String> inputs() {
        return inputs;
    }

    /** Output tensor names in operator order. */
    public List<String> outputs() {
        return outputs;
    }

    /**
     * Whether a tensor of this layer stays on chip ({@link #ON_CHIP}): its bytes are never moved. An attribute of that
     * name that holds no strings (an imported file's own) marks nothing.
     */
    public boolean onChip(String tensor) {
        Attribute a = attributes.get(ON_CHIP);
        return a != null && (a.kind() == Attribute.Kind.STRINGS || a.kind() == Attribute.Kind.STRING)
                && a.asStrings().contains(tensor);
    }

    /**
     * Whether any tensor of this layer stays on chip ({@link #ON_CHIP} names one): a layer of a fused kernel, such as
     * a fused attention core's products.
     */
    public boolean keepsTilesOnChip() {
        Attribute a = attributes.get(ON_CHIP);
        return a != null && (a.kind() == Attribute.Kind.STRINGS || a.kind() == Attribute.Kind.STRING)
                && !a.asStrings().isEmpty();
    }

    /** Whether the backward pass repeats this layer's forward pass ({@link #RECOMPUTED_IN_BACKWARD} is 1). */
    public boolean recomputedInBackward() {
        return flag(RECOMPUTED_IN_BACKWARD);
    }

    /** Whether this softmax's scores are masked by padding, not causally ({@link #PADDING_MASK} is 1). */
    public boolean paddingMask() {
        return flag(PADDING_MASK);
    }

    /** Whether Transformer Engine's fused grouped MLP folds this layer into its kernels ({@link #FUSED_GROUPED_MLP}). */
    public boolean fusedInGroupedMlp() {
        return flag(FUSED_GROUPED_MLP);
    }

    /**
     * The key/value heads and their size an attention core's split names ({@link #KEY_VALUE_HEADS}): empty where the
     * layer takes the model's (or names them otherwise than as two positive integers).
     */
    public Optional<long[]> keyValueHeads() {
        Attribute a = attributes.get(KEY_VALUE_HEADS);
        if (a == null || a.kind() != Attribute.Kind.INTS) {
            return Optional.empty();
        }
        long[] v = a.asLongs();
        return v.length == 2 && v[0] > 0 && v[1] > 0 ? Optional.of(v) : Optional.empty();
    }

    /** The causal sliding window an attention core's layer attends within ({@link #ATTENTION_WINDOW}), if any. */
    public java.util.OptionalLong attentionWindow() {
        Attribute a = attributes.get(ATTENTION_WINDOW);
        return a != null && a.kind() == Attribute.Kind.INT && a.asLong() > 0 ? java.util.OptionalLong.of(a.asLong())
                : java.util.OptionalLong.empty();
    }

    /** The chunk an attention core's layer attends within ({@link #ATTENTION_CHUNK}), if any. */
    public java.util.OptionalLong attentionChunk() {
        Attribute a = attributes.get(ATTENTION_CHUNK);
        return a != null && a.kind() == Attribute.Kind.INT && a.asLong() > 0 ? java.util.OptionalLong.of(a.asLong())
                : java.util.OptionalLong.empty();
    }

    /** Whether the layer's integer attribute {@code name} is 1 (a mark of scaledl's own graphs). */
    private boolean flag(String name) {
        Attribute a = attributes.get(name);
        return a != null && a.kind() == Attribute.Kind.INT && a.asLong() == 1;
    }

    /** The i-th input name if present and not omitted. */
    public Optional<String> input(int i) {
        return i < inputs.size() && !inputs.get(i).isEmpty() ? Optional.of(inputs.get(i)) : Optional.empty();
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof Layer l && l.name.equals(name) && l.opType.equals(opType) && l.domain.equals(domain)
                && l.attributes.equals(attributes) && l.inputs.equals(inputs) && l.outputs.equals(outputs);
    }

    @Override
    public int hashCode() {
        return Objects.hash(name, opType, domain, attributes, inputs, outputs);
    }

    @Override
    public String toString() {
        return opType + " '" + name + "' " + inputs + " -> " + outputs;
    }

    /** Builds a {@link Layer}. */
    public static final class Builder {
        private final String name;
        private final String opType;
        private String domain = "";
        private final Map<String, Attribute> attributes = new TreeMap<>();
        private List<String> inputs = List.of();
        private List<String> outputs = List.of();

        private Builder(String name, String opType) {
            this.name = Objects.requireNonNull(name, "name");
            this.opType = Objects.requireNonNull(opType, "opType");
            Checks.argument(!name.isEmpty(), "layer name must not be empty");
            Checks.argument(!opType.isEmpty(), "op type of '%s' must not be empty", name);
        }

        /** Operator domain (empty for ONNX's default domain). */
        public Builder domain(String value) {
            this.domain = Objects.requireNonNull(value, "domain");
            return this;
        }

        /** Input tensor names. */
        public Builder inputs(String... names) {
            return inputs(List.of(names));
        }

        /** Input tensor names. */
        public Builder inputs(List<String> names) {
            this.inputs = List.copyOf(names);
            return this;
        }

        /** Output tensor names. */
        public Builder outputs(String... names) {
            return outputs(List.of(names));
        }

        /** Output tensor names. */
        public Builder outputs(List<String> names) {
            this.outputs = List.copyOf(names);
            return this;
        }

        /** Adds or replaces an attribute. */
        public Builder attribute(String attributeName, Attribute value) {
            attributes.put(Objects.requireNonNull(attributeName, "attributeName"),
                    Objects.requireNonNull(value, "value"));
            return this;
        }

        /** The layer. */
        public Layer build() {
            return new Layer(this);
        }
    }
}
