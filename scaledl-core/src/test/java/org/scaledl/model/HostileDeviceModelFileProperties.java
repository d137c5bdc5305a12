package org.scaledl.model;

import java.nio.file.Path;
import org.scaledl.TestData;
import org.scaledl.io.DeviceCatalog;
import org.scaledl.onnx.OnnxImporter;
import org.scaledl.workload.Workload;

/** A device predictor's file with its all-reduce model, field by field (see {@link HostileModelFiles}). */
class HostileDeviceModelFileProperties extends HostileModelFiles {
    @Override
    protected Path file() {
        return Path.of("src/test/resources/saved-v2/device-v2.sdl");
    }

    @Override
    protected Workload workload() {
        return Workload.builder(OnnxImporter.read(TestData.graph("resnet18_r64"))).batch(8).worldSize(4)
                .device(DeviceCatalog.bundled().require("NVIDIA A100-SXM4-40GB")).build();
    }
}
