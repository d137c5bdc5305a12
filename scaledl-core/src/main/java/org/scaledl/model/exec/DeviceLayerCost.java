package org.scaledl.model.exec;

import org.scaledl.workload.Device;
import org.scaledl.workload.LayerFeatures;
import org.scaledl.workload.Phase;
import org.scaledl.workload.Precision;
import org.scaledl.workload.Workload;

/**
 * The cost of one layer on one device, as the execution model needs it: a layer's forward or backward time, and the
 * whole-model calibration factor of a phase on a device. Implemented by the device layer model
 * ({@code org.scaledl.model.device.DeviceLayerModel}); {@link ParallelExecution} combines these costs over tensor,
 * pipeline and data parallelism without knowing how they are predicted.
 */
public interface DeviceLayerCost extends org.scaledl.model.cost.OperatorCost {

    /**
     * A whole workload on one device without parallelism (the sum of its layers' times with the whole-model factor),
     * ms.
     */
    double predictMillis(Workload w);

    /** The whole-model calibration factor of a phase on a device (what isolated layer costs miss). */
    double factor(Phase phase, Device device);

    /**
     * The highest fraction of its peak a contraction in a precision sustains on a device (the kernel data's own
     * ceiling): no calibration makes a contraction faster than its work at this fraction of the peak.
     */
    default double sustainedPeakFraction(Device device, Precision precision) {
        return device.matrixUnits(precision) ? 0.9 : 0.95;
    }
}
