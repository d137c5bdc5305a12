package org.scaledl.io;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.scaledl.InvalidInputException;
import org.scaledl.TestData;
import org.scaledl.workload.Dataset;
import org.scaledl.workload.Sample;

class DatasetReaderTest {
    private static final String HEADER = "model,resolution,batch,world_size,threads,phase,iter_ms_p50,params,graph\n";

    @TempDir
    Path dir;

    private Path dataset(String rows) throws IOException {
        Files.createDirectories(dir.resolve("graphs"));
        Files.copy(TestData.graph("resnet18_r64"), dir.resolve("graphs/resnet18_r64.onnx"));
        Files.writeString(dir.resolve("runs.csv"), rows);
        return dir;
    }

    @Test
    void readsTheBundledDataset() {
        Dataset d = DatasetReader.read(TestData.cpuDdp());
        assertEquals(462, d.size());
        assertEquals(10, d.distinct("family").size());
        assertTrue(d.samples().stream().anyMatch(s -> !s.layerMillis().isEmpty()));
        Sample first = d.samples().get(0);
        assertEquals("alexnet", first.workload().tag("model").orElseThrow());
        assertEquals("0", first.workload().tag("row").orElseThrow());
        // Graphs are imported once per file and shared by their samples.
        assertTrue(d.samples().get(0).workload().graph() == d.samples().get(1).workload().graph());
    }

    @Test
    void familyStripsVariantSuffixes() {
        assertEquals("resnet", Dataset.familyOf("resnet50"));
        assertEquals("mobilenet", Dataset.familyOf("mobilenet_v3_large"));
        assertEquals("vit", Dataset.familyOf("vit_b_16"));
    }

    @Test
    void missingColumnNamesFileAndLine() throws IOException {
        Path d = dataset("model,batch,world_size,threads,phase,graph\nresnet18,2,1,1,train,graphs/resnet18_r64.onnx\n");
        InvalidInputException e = assertThrows(InvalidInputException.class, () -> DatasetReader.read(d));
        assertTrue(e.getMessage().contains("iter_ms_p50"), e.getMessage());
        assertEquals(1, e.line());
        assertTrue(e.source().orElseThrow().endsWith("runs.csv"));
    }

    @Test
    void badValuesNameTheirLine() throws IOException {
        String ok = "resnet18,64,2,1,1,train,10.5,11689512,graphs/resnet18_r64.onnx\n";
        for (String bad : new String[] {"resnet18,64,2,1,1,train,NaN,11689512,graphs/resnet18_r64.onnx\n",
            "resnet18,64,2,1,1,train,-3,11689512,graphs/resnet18_r64.onnx\n",
            "resnet18,64,2,1,1,train,0,11689512,graphs/resnet18_r64.onnx\n",
            "resnet18,64,two,1,1,train,10,11689512,graphs/resnet18_r64.onnx\n",
            "resnet18,64,2,1,1,fly,10,11689512,graphs/resnet18_r64.onnx\n",
            "resnet18,64,2,1,1,train,10,11689512,graphs/missing.onnx\n",
            "resnet18,64,2,1,1,train,10\n"}) {
            Path d = dataset(HEADER + ok + bad);
            InvalidInputException e = assertThrows(InvalidInputException.class, () -> DatasetReader.read(d), bad);
            assertEquals(3, e.line(), e.getMessage());
            Files.delete(d.resolve("graphs/resnet18_r64.onnx"));
        }
    }

    @Test
    void emptyRunsFileIsRejected() throws IOException {
        Path d = dataset(HEADER);
        InvalidInputException e = assertThrows(InvalidInputException.class, () -> DatasetReader.read(d));
        assertFalse(e.getMessage().isEmpty());
    }
}
