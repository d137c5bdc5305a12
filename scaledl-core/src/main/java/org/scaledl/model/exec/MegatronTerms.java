package org.scaledl.model.exec;

import org.scaledl.Checks;

/**
 * The uncalibrated parts of one Megatron training (or inference) iteration, on the critical path of its schedule:
 * what {@link MegatronModel}'s coefficients scale. Contractions are kept layer by layer with their floor (their work
 * at the highest fraction of the peak any contraction of that kind sustained in the kernel data), so that a
 * calibration never makes a large one faster than physics allows.
 *
 * @param denseTree    per contraction layer, its predicted time on the critical path (ms: every repeat, every
 *                     micro-batch, the schedule's fill and drain)
 * @param denseFloor   per contraction layer, the same work at the sustained ceiling of the peak (ms)
 * @param other        every other layer, predicted (ms)
 * @param tensorComm   tensor-parallel collectives (ms)
 * @param layerSteps   layer executions on the critical path (each costs the framework a fixed time on the host)
 * @param sends        pipeline hand-offs on the critical path
 * @param pipelineComm the hand-offs' transfer time at the link's bandwidth (ms)
 * @param dataComm     data-parallel gradient reduction (ms)
 * @param optimizer    the optimizer step at the memory bandwidth (ms)
 */
public record MegatronTerms(double[] denseTree, double[] denseFloor, double other, double tensorComm,
        double layerSteps, double sends, double pipelineComm, double dataComm, double optimizer) {
    /** Validates and copies. */
    public MegatronTerms {
        Checks.argument(denseTree.length == denseFloor.length, "tree and floor per contraction");
        denseTree = denseTree.clone();
        denseFloor = denseFloor.clone();
    }

    /** The contractions' predicted time, uncalibrated (ms). */
    public double dense() {
        double s = 0;
        for (double t : denseTree) {
            s += t;
        }
        return s;
    }
}
