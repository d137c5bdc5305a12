package org.scaledl.model.exec;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.scaledl.graph.Edge;
import org.scaledl.graph.LayerRole;
import org.scaledl.graph.ModelGraph;
import org.scaledl.transformer.HuggingFaceConfig;
import org.scaledl.workload.RecomputeModule;

/**
 * Which layers each of Megatron core's recompute modules runs again, on GPT-OSS (mixture of experts with a clamped
 * SwiGLU, no shared expert) and DeepSeek-V3 (latent attention, three dense layers, a shared expert): the sets the
 * roles and edges give, checked against the kinds and names of the layers.
 */
class RecomputeRegionsTest {
    private static final ModelGraph OSS = HuggingFaceConfig.read(Path.of(
            "src/test/resources/transformers/gpt-oss-20b/config.json")).graph(256);
    private static final ModelGraph DSV3 = HuggingFaceConfig.read(Path.of(
            "src/test/resources/transformers/deepseek-v3/config.json")).graph(256);

    private static List<String> named(ModelGraph g, Set<RecomputeModule> modules, RecomputeModule m) {
        RecomputeModule[] r = RecomputeRegions.of(g, modules);
        List<String> out = new ArrayList<>();
        for (int i = 0; i < g.size(); i++) {
            if (r[i] == m) {
                out.add(g.layer(i).name());
            }
        }
        return out;
    }

    private static boolean blockHasRouter(ModelGraph g, int block) {
        for (int i = 0; i < g.size(); i++) {
            if (g.role(i).block() == block && g.role(i).kind() == LayerRole.Kind.ROUTER) {
                return true;
            }
        }
        return false;
    }

    @Test
    void theCoreTheExpertsActivationAndTheRoutersNorm() {
        RecomputeModule[] core = RecomputeRegions.of(OSS, RecomputeModule.DEFAULT);
        RecomputeModule[] act = RecomputeRegions.of(OSS, EnumSet.of(RecomputeModule.MOE_ACT));
        RecomputeModule[] norm = RecomputeRegions.of(OSS, EnumSet.of(RecomputeModule.LAYERNORM));
        int norms = 0;
        int acts = 0;
        for (int i = 0; i < OSS.size(); i++) {
            LayerRole r = OSS.role(i);
            assertEquals(r.kind().attentionCore(), core[i] == RecomputeModule.CORE_ATTN, OSS.layer(i).name());
            assertEquals(r.kind() == LayerRole.Kind.EXPERT_ACT, act[i] == RecomputeModule.MOE_ACT,
                    OSS.layer(i).name());
            acts += act[i] != null ? 1 : 0;
            if (norm[i] != null) {
                norms++;
                assertEquals(LayerRole.Kind.NORM, r.kind());
                boolean feedsRouter = false;
                for (Edge e : OSS.edges()) {
                    feedsRouter |= e.from() == i && OSS.role(e.to()).kind() == LayerRole.Kind.ROUTER;
                }
                assertTrue(feedsRouter, OSS.layer(i).name());
            }
        }
        // two block kinds (sliding and full attention), each: clamp, concatenation, and the fused gated pair
        assertEquals(2 * 4, acts);
        assertTrue(named(OSS, EnumSet.of(RecomputeModule.MOE_ACT), RecomputeModule.MOE_ACT).stream()
                .anyMatch(n -> n.endsWith("/clamp")));
        assertEquals(2, norms, "one norm before each kind of block's experts; the attention's is fused");
        // nothing of a dense MLP, a latent attention or a shared expert in GPT-OSS
        RecomputeModule[] none = RecomputeRegions.of(OSS, EnumSet.of(RecomputeModule.MLP,
                RecomputeModule.MLA_UP_PROJ, RecomputeModule.SHARED_EXPERTS));
        for (int i = 0; i < OSS.size(); i++) {
            assertNull(none[i], OSS.layer(i).name());
        }
    }

    /**
     * The whole mixture of experts: everything between the router's norm and the residual add, nothing of the
     * attention, the norms or the residual; where moe and moe_act both name a layer, moe's (larger) checkpoint takes
     * it.
     */
    @Test
    void theWholeMixtureOfExpertsRunsFromTheRoutersInputToTheResidual() {
        RecomputeModule[] r = RecomputeRegions.of(DSV3, EnumSet.of(RecomputeModule.MOE, RecomputeModule.MOE_ACT));
        int in = 0;
        for (int i = 0; i < DSV3.size(); i++) {
            LayerRole role = DSV3.role(i);
            LayerRole.Kind k = role.kind();
            boolean expected = role.region() == LayerRole.Region.BLOCK && blockHasRouter(DSV3, role.block())
                    && (k == LayerRole.Kind.ROUTER || k.expert() || k == LayerRole.Kind.MLP_IN
                    || k == LayerRole.Kind.MLP_ACT || k == LayerRole.Kind.MLP_OUT);
            assertEquals(expected, r[i] == RecomputeModule.MOE, DSV3.layer(i).name() + " " + k);
            assertTrue(r[i] == null || r[i] == RecomputeModule.MOE, DSV3.layer(i).name());
            in += r[i] != null ? 1 : 0;
        }
        assertTrue(in > 10, "routers, experts and shared experts: " + in);
    }

    /**
     * Latent attention's up projections (and nothing fed by the layer's input directly); the dense layers' MLP with
     * its norm, and the MoE layers' shared expert, apart.
     */
    @Test
    void upProjectionsDenseMlpAndSharedExpertsApart() {
        assertEquals(List.of("q_b", "kv_b"), named(DSV3, EnumSet.of(RecomputeModule.MLA_UP_PROJ),
                RecomputeModule.MLA_UP_PROJ).stream().map(n -> n.substring(n.lastIndexOf('/') + 1)).distinct()
                .toList());
        RecomputeModule[] r = RecomputeRegions.of(DSV3, EnumSet.of(RecomputeModule.MLP,
                RecomputeModule.SHARED_EXPERTS));
        int dense = 0;
        int shared = 0;
        for (int i = 0; i < DSV3.size(); i++) {
            LayerRole role = DSV3.role(i);
            if (r[i] == RecomputeModule.MLP) {
                dense++;
                assertTrue(!blockHasRouter(DSV3, role.block()), DSV3.layer(i).name());
                assertTrue(role.kind() == LayerRole.Kind.NORM || role.kind().name().startsWith("MLP_"),
                        DSV3.layer(i).name());
            } else if (r[i] == RecomputeModule.SHARED_EXPERTS) {
                shared++;
                assertTrue(blockHasRouter(DSV3, role.block()), DSV3.layer(i).name());
                assertTrue(role.kind().name().startsWith("MLP_"), DSV3.layer(i).name());
            }
        }
        assertTrue(dense >= 4 && shared >= 3, dense + " dense MLP layers, " + shared + " shared-expert layers");
        long denseNorms = java.util.stream.IntStream.range(0, DSV3.size())
                .filter(i -> r[i] == RecomputeModule.MLP && DSV3.role(i).kind() == LayerRole.Kind.NORM).count();
        assertEquals(1, denseNorms, "the dense layers' MLP norm, fused into its up projection");
    }
}
