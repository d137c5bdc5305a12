package org.scaledl.workload;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;
import org.scaledl.workload.Workload.ScheduleChoice;

/**
 * A job states a schedule choice when its builder's setter is called, with any value (the default too), and keeps it
 * through {@link Workload#toBuilder()}; a job that leaves it out states nothing, though its value is the same.
 */
class ScheduleChoiceTest {
    @Test
    void aChoiceIsStatedBySettingItAndKeptThroughToBuilder() {
        org.scaledl.graph.ModelGraph g = org.scaledl.onnx.OnnxImporter.read(org.scaledl.TestData.graph("resnet18_r64"));
        Workload plain = Workload.builder(g).build();
        for (ScheduleChoice c : ScheduleChoice.values()) {
            assertFalse(plain.states(c), c.name());
            assertFalse(plain.toBuilder().batch(4).build().states(c), c.name());
        }
        Workload reduce = Workload.builder(g).gradReduce(org.scaledl.workload.GradReduce.OVERLAPPED).build();
        assertTrue(reduce.states(ScheduleChoice.GRAD_REDUCE));
        assertFalse(reduce.states(ScheduleChoice.CUDA_GRAPHS));
        assertEquals(plain.gradReduce(), reduce.gradReduce(), "the default, stated");
        Workload graphs = reduce.toBuilder().cudaGraphs(CudaGraphs.NONE).batch(8).build();
        assertTrue(graphs.states(ScheduleChoice.GRAD_REDUCE) && graphs.states(ScheduleChoice.CUDA_GRAPHS));
        assertFalse(graphs.states(ScheduleChoice.EXPERT_COMM_OVERLAP));
        assertTrue(Workload.builder(g).expertCommOverlap(false).build().states(ScheduleChoice.EXPERT_COMM_OVERLAP));
    }
}
