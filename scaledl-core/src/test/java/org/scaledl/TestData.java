package org.scaledl;

import java.nio.file.Files;
import java.nio.file.Path;

/** Locates the dataset bundled with the repository ({@code datasets/cpu-ddp}), whatever the working directory. */
public final class TestData {
    private TestData() {
    }

    /** The bundled reference dataset. */
    public static Path cpuDdp() {
        Path dir = Path.of("").toAbsolutePath();
        while (dir != null) {
            Path candidate = dir.resolve("datasets").resolve("cpu-ddp");
            if (Files.isDirectory(candidate)) {
                return candidate;
            }
            dir = dir.getParent();
        }
        throw new IllegalStateException("datasets/cpu-ddp not found above " + Path.of("").toAbsolutePath());
    }

    /** The GPU data excerpts in test resources (layout of {@code shared/data}: {@code neusight/}, {@code deepbench/}). */
    public static Path gpu() {
        try {
            return Path.of(TestData.class.getResource("/gpu/PROVENANCE.md").toURI()).getParent();
        } catch (java.net.URISyntaxException e) {
            throw new IllegalStateException(e);
        }
    }

    /** The bundled GPU data ({@code datasets/gpu}: NeuSight, DeepBench, vTrain). */
    public static Path gpuDataset() {
        return cpuDdp().getParent().resolve("gpu");
    }

    /** One bundled graph, e.g. {@code graph("resnet18_r64")}. */
    public static Path graph(String name) {
        return cpuDdp().resolve("graphs").resolve(name + ".onnx");
    }
}
