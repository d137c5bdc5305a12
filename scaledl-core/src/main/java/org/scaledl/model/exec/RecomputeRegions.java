package org.scaledl.model.exec;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.Deque;
import java.util.List;
import java.util.Set;
import org.scaledl.graph.Edge;
import org.scaledl.graph.LayerRole;
import org.scaledl.graph.ModelGraph;
import org.scaledl.workload.RecomputeModule;

/**
 * Which layers of a transformer graph selective recomputation runs again, module by module (Megatron core's
 * {@code recompute_modules}): for each layer the module that recomputes it, or none. Found from the layers' roles and
 * the graph's edges:
 * <ul>
 *   <li>{@code core_attn}: the attention core's layers (and a sparse-attention indexer's);</li>
 *   <li>{@code moe_act}: the routed experts' activation layers;</li>
 *   <li>{@code layernorm}: a block's norm whose output a router reads (Transformer Engine fuses the others into the
 *       next projection, which leaves Megatron core nothing to recompute);</li>
 *   <li>{@code mla_up_proj}: the query and key/value projections that read a latent attention's latent (and the
 *       query's own projection where it has no latent), and what rotates and joins them before the core;</li>
 *   <li>{@code mlp}: in blocks without a router, the MLP's layers and the norm before them;</li>
 *   <li>{@code moe}: everything from the router's input to the residual stream (its dropout and add not): router,
 *       dispatch, experts, combination, shared experts, latent projections;</li>
 *   <li>{@code shared_experts}: the MLP layers of blocks with a router (not the add joining them to the routed
 *       experts' output).</li>
 * </ul>
 * A layer two modules name takes {@code moe}'s (the larger checkpoint) where one of them is {@code moe}, else the
 * first in {@link RecomputeModule}'s order.
 */
final class RecomputeRegions {
    private RecomputeRegions() {
    }

    /** Per layer index the module recomputing it, null where none does. */
    static RecomputeModule[] of(ModelGraph g, Set<RecomputeModule> modules) {
        int n = g.size();
        List<List<Integer>> consumers = new ArrayList<>(n);
        List<List<Integer>> producers = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            consumers.add(new ArrayList<>(2));
            producers.add(new ArrayList<>(2));
        }
        for (Edge e : g.edges()) {
            consumers.get(e.from()).add(e.to());
            producers.get(e.to()).add(e.from());
        }
        // block kinds with a router: their MLP layers are shared experts, the others' a dense MLP
        BitSet moeBlocks = new BitSet();
        // block kinds with latent attention: a projection there reading a latent is an up projection
        BitSet mlaBlocks = new BitSet();
        for (int i = 0; i < n; i++) {
            LayerRole r = g.role(i);
            if (r.region() == LayerRole.Region.BLOCK && r.kind() == LayerRole.Kind.ROUTER) {
                moeBlocks.set(r.block());
            }
            if (r.region() == LayerRole.Region.BLOCK && r.kind() == LayerRole.Kind.QKV
                    && upProjection(g, i, producers, 0)) {
                mlaBlocks.set(r.block());
            }
        }
        RecomputeModule[] out = new RecomputeModule[n];
        for (RecomputeModule m : RecomputeModule.values()) {
            if (!modules.contains(m) || m == RecomputeModule.MOE) {
                continue;
            }
            for (int i = 0; i < n; i++) {
                if (out[i] == null && in(m, g, i, moeBlocks, mlaBlocks, consumers, producers)) {
                    out[i] = m;
                }
            }
        }
        if (modules.contains(RecomputeModule.MOE)) {
            for (int i = 0; i < n; i++) {
                if (routerNorm(g, i, consumers)) {
                    // from the norm's output to the residual add, the norm itself kept
                    Deque<Integer> todo = new ArrayDeque<>(consumers.get(i));
                    while (!todo.isEmpty()) {
                        int j = todo.pop();
                        // up to the residual stream: the dropout and add after the layer are not the MoE's
                        if (out[j] == RecomputeModule.MOE || g.role(j).kind().residualStream()
                                || g.role(j).region() != LayerRole.Region.BLOCK) {
                            continue;
                        }
                        out[j] = RecomputeModule.MOE;
                        todo.addAll(consumers.get(j));
                    }
                }
            }
        }
        return out;
    }

    private static boolean in(RecomputeModule m, ModelGraph g, int i, BitSet moeBlocks, BitSet mlaBlocks,
            List<List<Integer>> consumers, List<List<Integer>> producers) {
        LayerRole r = g.role(i);
        if (r.region() != LayerRole.Region.BLOCK) {
            return false;
        }
        LayerRole.Kind k = r.kind();
        boolean moeBlock = moeBlocks.get(r.block());
        boolean mlpKind = k == LayerRole.Kind.MLP_IN || k == LayerRole.Kind.MLP_ACT || k == LayerRole.Kind.MLP_OUT;
        return switch (m) {
            case CORE_ATTN -> k.attentionCore();
            case MOE_ACT -> k == LayerRole.Kind.EXPERT_ACT;
            case LAYERNORM -> routerNorm(g, i, consumers);
            // the up projections of the latents, and the query's own projection where it has no latent
            case MLA_UP_PROJ -> k == LayerRole.Kind.QKV && mlaBlocks.get(r.block())
                    && (upProjection(g, i, producers, 0) || !producers.get(i).isEmpty()
                    && producers.get(i).stream().allMatch(p -> g.role(p).kind() == LayerRole.Kind.NORM));
            case MLP -> !moeBlock && (mlpKind || k == LayerRole.Kind.NORM && !consumers.get(i).isEmpty()
                    && consumers.get(i).stream().allMatch(j -> g.role(j).kind() == LayerRole.Kind.MLP_IN));
            // the shared experts' MLP; the add joining it to the routed experts' output is the MoE layer's
            case SHARED_EXPERTS -> moeBlock && mlpKind && !g.layer(i).opType().equals("Add");
            case MOE -> false;
        };
    }

    /**
     * Whether residual add {@code i} closes a sub-layer whose MLP or mixture of experts is recomputed (through a
     * dropout): its tensor-parallel collective (the row-parallel reduction, the experts' gathers) runs again.
     */
    static boolean closesRecomputedCollective(ModelGraph g, RecomputeModule[] redo, int i) {
        for (String x : g.layer(i).inputs()) {
            Integer p = g.producerOf(x).orElse(null);
            if (p != null && g.role(p).kind() == LayerRole.Kind.DROPOUT && !g.layer(p).inputs().isEmpty()) {
                p = g.producerOf(g.layer(p).inputs().get(0)).orElse(null);
            }
            if (p != null && (redo[p] == RecomputeModule.MLP || redo[p] == RecomputeModule.MOE)) {
                return true;
            }
        }
        return false;
    }

    /** A block's norm whose output a router reads: the mixture of experts' input norm. */
    private static boolean routerNorm(ModelGraph g, int i, List<List<Integer>> consumers) {
        LayerRole r = g.role(i);
        return r.region() == LayerRole.Region.BLOCK && r.kind() == LayerRole.Kind.NORM
                && consumers.get(i).stream().anyMatch(j -> g.role(j).kind() == LayerRole.Kind.ROUTER);
    }

    /** A query/key/value layer fed, through other such layers, by a latent attention's latent. */
    private static boolean upProjection(ModelGraph g, int i, List<List<Integer>> producers, int depth) {
        if (depth > 8) {
            return false;
        }
        for (int p : producers.get(i)) {
            LayerRole.Kind k = g.role(p).kind();
            if (k == LayerRole.Kind.LATENT || k == LayerRole.Kind.QKV && upProjection(g, p, producers, depth + 1)) {
                return true;
            }
        }
        return false;
    }
}
