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
import org.scaledl.workload.Precision;
import org.scaledl.workload.Sample;
import org.scaledl.workload.Workload;

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

    /**
     * A companion GPU dataset: rows naming a GPU of the catalog carry that GPU and their precision (a device model
     * can then predict and calibrate on them; they were read as CPU machines in FP32 before), a CPU machine's name
     * stays a CPU, and a precision that is none names its line.
     */
    @Test
    void gpuRowsCarryTheCatalogGpuAndTheirPrecision() throws IOException {
        Path d = dataset("model,batch,world_size,threads,phase,iter_ms_p50,graph,precision,device\n"
                + "resnet18,2,1,1,train,5.0,graphs/resnet18_r64.onnx,bf16,NVIDIA H200\n"
                + "resnet18,2,1,1,infer,2.0,graphs/resnet18_r64.onnx,,my-cpu-box\n");
        Dataset data = DatasetReader.read(d);
        Workload gpu = data.samples().get(0).workload();
        assertTrue(gpu.device().orElseThrow().isGpu());
        assertEquals(DeviceCatalog.bundled().require("NVIDIA H200"), gpu.device().orElseThrow());
        assertEquals(Precision.BF16, gpu.precision());
        Workload cpu = data.samples().get(1).workload();
        assertFalse(cpu.device().orElseThrow().isGpu());
        assertEquals(Precision.FP32, cpu.precision());

        Files.writeString(d.resolve("runs.csv"), "model,batch,world_size,threads,phase,iter_ms_p50,graph,precision\n"
                + "resnet18,2,1,1,train,5.0,graphs/resnet18_r64.onnx,fp99\n");
        InvalidInputException e = assertThrows(InvalidInputException.class, () -> DatasetReader.read(d));
        assertEquals(2, e.line());
        assertTrue(e.getMessage().contains("fp99"), e.getMessage());
    }

    /** A run's memory format is read (NCHW where the column or cell is empty); one that is none names its line. */
    @Test
    void gpuRowsCarryTheirMemoryFormat() throws IOException {
        Path d = dataset("model,batch,world_size,threads,phase,iter_ms_p50,graph,precision,device,memory_format\n"
                + "resnet18,2,1,1,train,5.0,graphs/resnet18_r64.onnx,bf16,NVIDIA H200,channels_last\n"
                + "resnet18,2,1,1,train,9.0,graphs/resnet18_r64.onnx,bf16,NVIDIA H200,\n");
        Dataset data = DatasetReader.read(d);
        assertEquals(org.scaledl.workload.MemoryFormat.CHANNELS_LAST, data.samples().get(0).workload().memoryFormat());
        assertEquals(org.scaledl.workload.MemoryFormat.NCHW, data.samples().get(1).workload().memoryFormat());
        Files.writeString(d.resolve("runs.csv"), "model,batch,world_size,threads,phase,iter_ms_p50,graph,"
                + "memory_format\nresnet18,2,1,1,train,5.0,graphs/resnet18_r64.onnx,nhcw\n");
        InvalidInputException e = assertThrows(InvalidInputException.class, () -> DatasetReader.read(d));
        assertEquals(2, e.line());
        assertTrue(e.getMessage().contains("nhcw"), e.getMessage());
    }

    /** A machine.json whose name is a catalog GPU (as the companion writes it on a GPU) makes every row that GPU. */
    @Test
    void aMachineThatNamesACatalogGpuIsThatGpu() throws IOException {
        Path d = dataset("model,batch,world_size,threads,phase,iter_ms_p50,graph\n"
                + "resnet18,2,1,1,train,5.0,graphs/resnet18_r64.onnx\n");
        Files.writeString(d.resolve("machine.json"), "{\"name\": \"NVIDIA H200\", \"cpus\": 16, \"gpu\": "
                + "\"NVIDIA H200\"}");
        Workload w = DatasetReader.read(d).samples().get(0).workload();
        assertEquals(DeviceCatalog.bundled().require("NVIDIA H200"), w.device().orElseThrow());
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

    @Test
    void timesAndSizesOutsideTheDocumentedBoundsNameFileAndLine() throws IOException {
        String ok = "resnet18,64,2,1,1,train,10.5,11689512,graphs/resnet18_r64.onnx\n";
        for (String bad : new String[] {"resnet18,64,2,1,1,train,4.9e-324,11689512,graphs/resnet18_r64.onnx\n",
            "resnet18,64,2,1,1,train,1e-20,11689512,graphs/resnet18_r64.onnx\n",
            "resnet18,64,2,1,1,train,1e308,11689512,graphs/resnet18_r64.onnx\n",
            "resnet18,64,2147483647,1,1,train,10,11689512,graphs/resnet18_r64.onnx\n",
            "resnet18,64,2,2000000,1,train,10,11689512,graphs/resnet18_r64.onnx\n",
            "resnet18,64,2,1,100000,train,10,11689512,graphs/resnet18_r64.onnx\n"}) {
            Path d = dataset(HEADER + ok + bad);
            InvalidInputException e = assertThrows(InvalidInputException.class, () -> DatasetReader.read(d), bad);
            assertEquals(3, e.line(), e.getMessage());
            assertTrue(e.getMessage().contains("runs.csv:3: ") && e.getMessage().contains(" must be "),
                    e.getMessage());
            Files.delete(d.resolve("graphs/resnet18_r64.onnx"));
        }
        Path d = dataset(HEADER + ok + "resnet18,64,1048576,1,1,infer,1e-6,11689512,graphs/resnet18_r64.onnx\n");
        assertEquals(2, DatasetReader.read(d).size(), "the bounds themselves are allowed");
    }

    @Test
    void everySampleNamesTheFileAndLineItWasReadFrom() throws IOException {
        Path d = dataset(HEADER + "\nresnet18,64,2,1,1,train,10.5,11689512,graphs/resnet18_r64.onnx\n");
        Sample s = DatasetReader.read(d).samples().get(0);
        assertEquals(d.resolve("runs.csv") + ":3", s.workload().tag(DatasetReader.SOURCE_TAG).orElseThrow());
    }

    @Test
    void graphPathsStayInsideTheDatasetFolder() throws IOException {
        Path outside = Files.createDirectories(dir.resolve("elsewhere"));
        Files.copy(TestData.graph("resnet18_r64"), outside.resolve("g.onnx"));
        Path data = dir.resolve("data");
        Files.createDirectories(data.resolve("graphs"));
        for (String graph : new String[] {"../../etc/shadow", "../elsewhere/g.onnx", outside.resolve("g.onnx")
                .toString(), "graphs/../../elsewhere/g.onnx", "/etc/shadow", "."}) {
            Files.writeString(data.resolve("runs.csv"), HEADER + "resnet18,64,2,1,1,train,10.5,11689512," + graph
                    + "\n");
            InvalidInputException e = assertThrows(InvalidInputException.class, () -> DatasetReader.read(data),
                    graph);
            assertEquals(2, e.line(), e.getMessage());
            assertTrue(e.getMessage().contains("runs.csv:2: ") && e.getMessage().contains("'" + graph + "'")
                    && e.getMessage().contains("leaves the dataset folder"), e.getMessage());
        }
        Files.createSymbolicLink(data.resolve("graphs/link.onnx"), outside.resolve("g.onnx"));
        Files.writeString(data.resolve("runs.csv"), HEADER + "resnet18,64,2,1,1,train,10.5,11689512,"
                + "graphs/link.onnx\n");
        InvalidInputException link = assertThrows(InvalidInputException.class, () -> DatasetReader.read(data));
        assertTrue(link.getMessage().contains("symbolic link") && link.getMessage().contains("graphs/link.onnx"),
                link.getMessage());
        // a link that stays inside the folder is fine
        Files.copy(TestData.graph("resnet18_r64"), data.resolve("graphs/real.onnx"));
        Files.createSymbolicLink(data.resolve("graphs/inside.onnx"), data.resolve("graphs/real.onnx"));
        Files.writeString(data.resolve("runs.csv"), HEADER + "resnet18,64,2,1,1,train,10.5,11689512,"
                + "graphs/inside.onnx\n");
        assertEquals(1, DatasetReader.read(data).size());
    }

    @Test
    void aRunsFileGivenForItsFolderIsSaidToBeAFile() throws IOException {
        Path d = dataset(HEADER + "resnet18,64,2,1,1,train,10.5,11689512,graphs/resnet18_r64.onnx\n");
        InvalidInputException e = assertThrows(InvalidInputException.class,
                () -> DatasetReader.read(d.resolve("runs.csv")));
        assertTrue(e.getMessage().contains("is a file, not a dataset folder") && e.getMessage().endsWith(": " + d + ")"),
                e.getMessage());
    }

    @Test
    void machineFieldsThatDoNotParseAreNamed() throws IOException {
        Path d = dataset(HEADER + "resnet18,64,2,1,1,train,10.5,11689512,graphs/resnet18_r64.onnx\n");
        Path m = d.resolve("machine.json");
        String[][] cases = {{"{\"name\": \"m\", \"cpus\": 2, \"l2\": \". MiB\"}", "\"l2\""},
            {"{\"name\": \"m\", \"cpus\": \"two\"}", "\"cpus\""},
            {"{\"name\": \"m\", \"cpus\": 2.5}", "\"cpus\""},
            {"{\"name\": \"m\", \"cpus\": 2, \"clock_mhz\": \"fast\"}", "\"clock_mhz\""},
            {"{\"name\": \"m\", \"cpus\": 2, \"memory_bandwidth_gbps\": -1}", "\"memory_bandwidth_gbps\""},
            {"{\"name\": \"m\", \"cpus\": 2, \"avx2\": \"yes\"}", "\"avx2\""},
            {"{\"name\": 7, \"cpus\": 2}", "\"name\""},
            {"{\"cpus\": 2}", "\"name\""},
            {"{\"name\": \"m\", \"cpus\": 2,", "invalid JSON at line 1"},
            {"{\"name\": \"m\", \"cpus\": 2, \"cpus\": 4}", "Duplicate field 'cpus'"},
            {"{\"name\": \"m\", \"cpus\": 2} {\"cpus\": 4}", "more text after the JSON value"},
            {"[1, 2]", "a JSON object"}, {" \n", "the file is empty"}};
        for (String[] c : cases) {
            Files.writeString(m, c[0]);
            InvalidInputException e = assertThrows(InvalidInputException.class, () -> DatasetReader.read(d), c[0]);
            assertTrue(e.getMessage().startsWith(m + ": ") && e.getMessage().contains(c[1])
                    && !e.getMessage().contains("REDACTED"), e.getMessage());
        }
        Files.writeString(m, "{\"name\": \"m\", \"cpus\": \"2\", \"l2\": \"1.5 MiB (2 instances)\", \"avx512\": true, "
                + "\"clock_mhz\": 2400, \"l3\": \"whatever\"}");
        var device = DatasetReader.read(d).samples().get(0).workload().device().orElseThrow();
        assertEquals("m", device.name());
    }
}
