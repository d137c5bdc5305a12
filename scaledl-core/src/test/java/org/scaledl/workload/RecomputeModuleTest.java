package org.scaledl.workload;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.Collections;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import org.junit.jupiter.api.Test;
import org.scaledl.InvalidInputException;
import org.scaledl.transformer.TransformerSpec;

class RecomputeModuleTest {
    /** Megatron core's names as its recipes write them, any separator, case or order, and its refusals named. */
    @Test
    void parsesMegatronCoresNamesAndNamesWhatItRefuses() {
        assertEquals(EnumSet.of(RecomputeModule.LAYERNORM, RecomputeModule.MOE_ACT),
                RecomputeModule.parseList("layernorm+moe_act"));
        assertEquals(EnumSet.of(RecomputeModule.LAYERNORM, RecomputeModule.MOE_ACT),
                RecomputeModule.parseList(" MOE_ACT, layernorm "));
        assertEquals(EnumSet.of(RecomputeModule.MLA_UP_PROJ, RecomputeModule.MLP),
                RecomputeModule.parseList("mla_up_proj mlp mlp"));
        assertEquals(EnumSet.allOf(RecomputeModule.class), RecomputeModule.parseList(
                "core_attn+moe_act+layernorm+mla_up_proj+mlp+moe+shared_experts"));
        InvalidInputException unknown = assertThrows(InvalidInputException.class,
                () -> RecomputeModule.parseList("moe_act+attn"));
        assertTrue(unknown.getMessage().contains("'attn'") && unknown.getMessage().contains("'moe_act+attn'")
                && unknown.getMessage().contains("core_attn, moe_act, layernorm"), unknown.getMessage());
        InvalidInputException gdn = assertThrows(InvalidInputException.class,
                () -> RecomputeModule.parseList("gdn_norm_out"));
        assertTrue(gdn.getMessage().contains("not described"), gdn.getMessage());
        for (String empty : new String[] {"", " ", "+", ", +"}) {
            assertThrows(InvalidInputException.class, () -> RecomputeModule.parseList(empty), "'" + empty + "'");
        }
        assertTrue(RecomputeModule.MOE_ACT.discardsOutput() && RecomputeModule.LAYERNORM.discardsOutput()
                && RecomputeModule.MLA_UP_PROJ.discardsOutput());
        assertFalse(RecomputeModule.CORE_ATTN.discardsOutput() || RecomputeModule.MLP.discardsOutput()
                || RecomputeModule.MOE.discardsOutput() || RecomputeModule.SHARED_EXPERTS.discardsOutput());
    }

    /** Any non-empty set of modules, written out in any order, reads back as itself from its label. */
    @Property
    void aSetsLabelReadsBackAsTheSet(@ForAll @IntRange(min = 1, max = 127) int bits, @ForAll long seed) {
        Set<RecomputeModule> set = EnumSet.noneOf(RecomputeModule.class);
        List<String> names = new ArrayList<>();
        for (RecomputeModule m : RecomputeModule.values()) {
            if ((bits >> m.ordinal() & 1) == 1) {
                set.add(m);
                names.add(m.label());
            }
        }
        assertEquals(set, RecomputeModule.parseList(RecomputeModule.label(set)));
        Collections.shuffle(names, new java.util.Random(seed));
        assertEquals(set, RecomputeModule.parseList(String.join(seed % 2 == 0 ? "+" : ", ", names)));
    }

    /**
     * A workload's modules are selective recomputation's (Megatron core reads them with that granularity only):
     * named with recompute auto they make it selective, with none or full they are refused, naming both; a workload
     * built again from it keeps them. Recomputing the whole mixture of experts is refused with the all-to-all
     * overlap, as Megatron core refuses it.
     */
    @Test
    void aWorkloadKeepsItsModulesWithSelectiveRecomputationOnly() {
        var g = TransformerSpec.decoder("gpt", 256, 4, 2, 1000).build().graph(64);
        Set<RecomputeModule> mods = EnumSet.of(RecomputeModule.MOE_ACT, RecomputeModule.LAYERNORM);
        Workload sel = Workload.builder(g).recompute(Recompute.SELECTIVE).recomputeModules(mods).build();
        assertEquals(mods, sel.recomputeModules());
        assertEquals(mods, sel.toBuilder().build().recomputeModules());
        assertTrue(sel.toString().contains("recompute=selective:moe_act+layernorm"), sel.toString());
        Workload auto = Workload.builder(g).recomputeModules(mods).build();
        assertEquals(Recompute.SELECTIVE, auto.recompute());
        assertEquals(mods, auto.recomputeModules());
        for (Recompute rc : new Recompute[] {Recompute.NONE, Recompute.FULL}) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                    () -> sel.toBuilder().recompute(rc).build());
            assertTrue(e.getMessage().contains("moe_act+layernorm") && e.getMessage().contains(rc.label()),
                    e.getMessage());
            assertEquals(RecomputeModule.DEFAULT, Workload.builder(g).recompute(rc).build().recomputeModules());
        }
        assertThrows(IllegalArgumentException.class, () -> Workload.builder(g).recomputeModules(Set.of()));
        // a setting only a configuration-built transformer carries: an imported graph's predictors refuse it
        assertTrue(sel.transformerOnlySettings().contains("recompute modules moe_act+layernorm"),
                sel.transformerOnlySettings().toString());
        // recomputing (full or selective) and ZeRO are a configuration-built transformer's too (an imported graph's
        // execution models neither); no recomputation and the default, auto, are anyone's
        assertEquals(java.util.List.of("selective recomputation"),
                Workload.builder(g).recompute(Recompute.SELECTIVE).build().transformerOnlySettings());
        assertEquals(java.util.List.of("full recomputation of the first 2 layers", "ZeRO stage 1"),
                Workload.builder(g).recompute(Recompute.FULL).recomputeLayers(2)
                        .parallelism(Parallelism.of(2, 1, 1, 1).withZeroStage(1)).build().transformerOnlySettings());
        for (Recompute rc : new Recompute[] {Recompute.NONE, Recompute.AUTO}) {
            assertTrue(Workload.builder(g).recompute(rc).build().transformerOnlySettings().isEmpty(), rc.label());
        }
        IllegalArgumentException overlap = assertThrows(IllegalArgumentException.class, () -> Workload.builder(g)
                .parallelism(Parallelism.of(8, 1, 1, 2).withExpert(8, 1)).precision(Precision.BF16)
                .recompute(Recompute.SELECTIVE).recomputeModules(EnumSet.of(RecomputeModule.MOE))
                .expertCommOverlap(true).build());
        assertTrue(overlap.getMessage().contains("recompute module moe"), overlap.getMessage());
    }
}
