package org.scaledl.model;

import java.nio.file.Path;
import org.scaledl.TestData;
import org.scaledl.onnx.OnnxImporter;
import org.scaledl.workload.Device;
import org.scaledl.workload.Workload;

/** A calibrated host predictor's file, field by field (see {@link HostileModelFiles}). */
class HostileHostModelFileProperties extends HostileModelFiles {
    @Override
    protected Path file() {
        return Path.of("src/test/resources/saved-v2/host-v2-calibrated.sdl");
    }

    @Override
    protected Workload workload() {
        return Workload.builder(OnnxImporter.read(TestData.graph("resnet18_r64"))).batch(8).worldSize(2)
                .device(Device.cpu("AMD EPYC 2-core VM", 1, 0, 0, 0, 0)).build();
    }
}
