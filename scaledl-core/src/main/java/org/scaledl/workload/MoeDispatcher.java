package org.scaledl.workload;

import java.util.Locale;
import org.scaledl.InvalidInputException;

/**
 * How expert parallelism moves a mixture of experts' tokens to their experts and back (Megatron core's
 * {@code moe_token_dispatcher_type}, with {@code flex} its {@code moe_flex_dispatcher_backend}).
 *
 * <pre>{@code
 * MoeDispatcher d = MoeDispatcher.parse("hybridep");   // Megatron-Bridge's recipes of Nemotron 3 on B200
 * }</pre>
 */
public enum MoeDispatcher {
    /**
     * {@code alltoall}: an all-to-all of each token's copy per chosen expert ({@code k} copies a token), through the
     * network to every expert beyond the NVLink domain; the default.
     */
    ALLTOALL("alltoall"),
    /**
     * {@code allgather}: every rank of the expert group gathers the group's tokens (and reduce-scatters the experts'
     * results back), every other rank's tokens whatever their experts. Megatron core's default, but its recipes with
     * expert parallelism name {@code alltoall} or {@code flex}, and a log or table that names none is read as
     * {@link #ALLTOALL}.
     */
    ALLGATHER("allgather"),
    /**
     * {@code flex} with DeepEP: a token is sent once per rank holding any of its experts (the all-to-all sends a copy
     * per expert), and its permutation writes the experts' order itself (no sort after the exchange). Across nodes it
     * crosses the network once per node holding one of its experts, forwarded over NVLink there: that saving is not
     * described (with it the published runs came out too fast), a note says so.
     */
    DEEPEP("deepep"),
    /** {@code flex} with HybridEP: as DeepEP. */
    HYBRIDEP("hybridep");

    private final String label;

    MoeDispatcher(String label) {
        this.label = label;
    }

    /** The name CSV files and the command line use (Megatron core's). */
    public String label() {
        return label;
    }

    /**
     * Parses {@code alltoall}, {@code allgather}, {@code deepep}, {@code hybridep} or {@code flex} (Megatron core's
     * flex dispatcher with its default backend, DeepEP), any case, {@code -} or {@code _} alike.
     *
     * @throws InvalidInputException naming the text and the accepted values; {@code ncclep} as not described
     */
    public static MoeDispatcher parse(String text) {
        String t = text == null ? "" : text.trim().toLowerCase(Locale.ROOT).replace('-', '_');
        return switch (t) {
            case "alltoall", "all_to_all", "a2a" -> ALLTOALL;
            case "deepep", "flex", "flex_deepep" -> DEEPEP;
            case "hybridep", "hybrid_ep", "flex_hybridep" -> HYBRIDEP;
            case "allgather", "all_gather" -> ALLGATHER;
            case "ncclep", "flex_ncclep" -> throw InvalidInputException.of("MoE dispatcher '"
                    + InvalidInputException.printable(text, 80)
                    + "' is not described (alltoall, allgather, deepep and hybridep are)");
            default -> throw InvalidInputException.of("unknown MoE dispatcher '"
                    + InvalidInputException.printable(text, 80)
                    + "' (expected alltoall, allgather, deepep, hybridep or flex)");
        };
    }
}
