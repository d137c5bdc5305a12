package org.scaledl.workload;

import java.util.Collections;
import java.util.EnumSet;
import java.util.Locale;
import java.util.Set;
import java.util.StringJoiner;
import org.scaledl.InvalidInputException;

/**
 * What selective recomputation recomputes: Megatron core's {@code recompute_modules} (its
 * {@code TransformerConfig}, with {@code recompute_granularity} selective; default {@link #CORE_ATTN}). The forward
 * pass of a recomputed module keeps only the module's input, and the backward pass runs its forward again. Three of
 * them discard their output too ({@link #discardsOutput()}: the layers after them do not keep it either).
 *
 * <pre>{@code
 * Set<RecomputeModule> m = RecomputeModule.parseList("layernorm+moe_act");   // Megatron-Bridge's GPT-OSS recipes
 * Workload w = Workload.builder(g).recompute(Recompute.SELECTIVE).recomputeModules(m)...build();
 * }</pre>
 */
public enum RecomputeModule {
    /** {@code core_attn}: the attention core (scores, softmax, the context product); the default. */
    CORE_ATTN("core_attn", false),
    /** {@code moe_act}: the routed experts' activation function (with GPT-OSS's clamps). */
    MOE_ACT("moe_act", true),
    /**
     * {@code layernorm}: the norms Megatron core keeps apart from a projection; with Transformer Engine those before a
     * mixture of experts (the router's input). A norm fused into the next projection has nothing to recompute.
     */
    LAYERNORM("layernorm", true),
    /** {@code mla_up_proj}: multi-head latent attention's up projections of the query and key/value latents. */
    MLA_UP_PROJ("mla_up_proj", true),
    /** {@code mlp}: a dense layer's MLP (its norm, which Transformer Engine fuses into the up projection, with it). */
    MLP("mlp", false),
    /** {@code moe}: the whole mixture of experts (router, dispatch, experts, combination, shared experts). */
    MOE("moe", false),
    /** {@code shared_experts}: the shared experts' MLP of a mixture of experts. */
    SHARED_EXPERTS("shared_experts", false);

    /** What selective recomputation recomputes when no modules are named: the attention core. */
    public static final Set<RecomputeModule> DEFAULT = Collections.unmodifiableSet(EnumSet.of(CORE_ATTN));

    private final String label;
    private final boolean discardsOutput;

    RecomputeModule(String label, boolean discardsOutput) {
        this.label = label;
        this.discardsOutput = discardsOutput;
    }

    /** Megatron core's name, as CSV files and the command line give it. */
    public String label() {
        return label;
    }

    /**
     * Whether Megatron core discards the module's output as well ({@code CheckpointWithoutOutput}: {@code moe_act},
     * {@code layernorm}, {@code mla_up_proj}), so that the layers reading it do not keep it either; the others keep
     * their output where the next layer needs it.
     */
    public boolean discardsOutput() {
        return discardsOutput;
    }

    /**
     * Parses Megatron core's module names separated by commas, {@code +} or spaces ({@code "layernorm+moe_act"},
     * {@code "core_attn, mlp"}), any case, in any order.
     *
     * @throws InvalidInputException naming the text, the name not known and the accepted names; an empty list
     */
    public static Set<RecomputeModule> parseList(String text) {
        String t = text == null ? "" : text.trim();
        EnumSet<RecomputeModule> out = EnumSet.noneOf(RecomputeModule.class);
        for (String name : t.split("[,+\\s]+")) {
            if (name.isEmpty()) {
                continue;
            }
            out.add(parse(name, t));
        }
        if (out.isEmpty()) {
            throw InvalidInputException.of("no recompute modules in '" + InvalidInputException.printable(text, 80)
                    + "' (expected " + names() + ")");
        }
        return Collections.unmodifiableSet(out);
    }

    private static RecomputeModule parse(String name, String text) {
        String n = name.toLowerCase(Locale.ROOT);
        for (RecomputeModule m : values()) {
            if (m.label.equals(n)) {
                return m;
            }
        }
        if (n.equals("gdn_norm_out")) {
            throw InvalidInputException.of("recompute module gdn_norm_out in '"
                    + InvalidInputException.printable(text, 80) + "' is not described (a "
                    + "gated delta net's output norm and its all-to-all): leave it out");
        }
        throw InvalidInputException.of("unknown recompute module '" + InvalidInputException.printable(name, 80)
                + "' in '" + InvalidInputException.printable(text, 80) + "' (expected "
                + names() + ")");
    }

    /** The names joined by {@code +} in a fixed order: what {@link #parseList} reads back. */
    public static String label(Set<RecomputeModule> modules) {
        java.util.Objects.requireNonNull(modules, "modules");
        StringJoiner j = new StringJoiner("+");
        for (RecomputeModule m : values()) {
            if (modules.contains(m)) {
                j.add(m.label);
            }
        }
        return j.toString();
    }

    private static String names() {
        StringJoiner j = new StringJoiner(", ");
        for (RecomputeModule m : values()) {
            j.add(m.label);
        }
        return j.toString();
    }
}
