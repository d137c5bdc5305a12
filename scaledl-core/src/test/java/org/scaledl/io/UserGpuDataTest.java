package org.scaledl.io;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.scaledl.InvalidInputException;
import org.scaledl.workload.OpMeasurement;

/**
 * Round eleven of hostile input: a user's own GPU data root (what {@code fit --gpu --data} reads), as a probe found it
 * taking damaged tables silently: a folder where a table belongs, a kernel of 10^30 ms, one DeepBench sheet without
 * the other, a trace path leaving the root, an unknown GPU named without its line, an iteration in seconds beside its
 * rate in tokens per second. Every case is now refused naming the file (and line), or said.
 */
class UserGpuDataTest {
    private static final DeviceCatalog DEVICES = DeviceCatalog.bundled();

    private static Path root(Path dir) throws IOException {
        Path kernels = dir.resolve("neusight/kernels");
        Files.createDirectories(kernels);
        Files.writeString(kernels.resolve("bmm.csv"), "row_id,gpu,op,B,M,N,K,flops,latency_ms\n"
                + "0,Tesla T4,bmm,2,3,5,7,420,0.01\n");
        return dir;
    }

    /** A vTrain run carries its file and line, which a fit's refusal of it (a time in seconds) then names. */
    @Test
    void aVTrainRunKnowsItsLine(@TempDir Path dir) throws IOException {
        Path f = dir.resolve("ground_truth_single.csv");
        Files.writeString(f, "# GPUs,global batch,micro batch,hidden size,attention heads,# layers,sequence length,"
                + "tensor parallelism,data parallelism,pipeline parallelism,iteration time (ms)\n"
                + "8,16,1,1024,16,4,2048,2,2,2,350\n8,16,2,1024,16,4,2048,8,1,1,300\n");
        List<org.scaledl.workload.Sample> runs = GpuData.readVTrain(f, DEVICES.find("A100 40GB").orElseThrow());
        assertEquals(2, runs.size());
        assertEquals(f + ":3", runs.get(1).workload().tag(DatasetReader.SOURCE_TAG).orElseThrow());
    }

    @Test
    void aFolderWhereATableBelongsIsRefusedNamingIt(@TempDir Path dir) throws IOException {
        Path r = root(dir);
        Files.createDirectories(r.resolve("neusight/kernels/softmax.csv"));
        InvalidInputException e = assertThrows(InvalidInputException.class, () -> GpuData.read(r, DEVICES));
        assertTrue(e.getMessage().contains("softmax.csv") && e.getMessage().contains("is not a file"),
                e.getMessage());
    }

    @Test
    void aKernelOfHoursIsNoMeasurement(@TempDir Path dir) throws IOException {
        Path r = root(dir);
        Files.writeString(r.resolve("neusight/kernels/bmm.csv"), "row_id,gpu,op,B,M,N,K,flops,latency_ms\n"
                + "0,Tesla T4,bmm,2,3,5,7,420,0.01\n1,Tesla T4,bmm,2,3,5,7,420,1e30\n");
        InvalidInputException e = assertThrows(InvalidInputException.class, () -> GpuData.read(r, DEVICES));
        assertTrue(e.getMessage().contains("bmm.csv:3") && e.getMessage().contains("is no kernel's time"),
                e.getMessage());
        // the longest a kernel may take is still read
        Files.writeString(r.resolve("neusight/kernels/bmm.csv"), "row_id,gpu,op,B,M,N,K,flops,latency_ms\n"
                + "0,Tesla T4,bmm,2,3,5,7,420," + KernelTables.MAX_KERNEL_MILLIS + "\n");
        List<OpMeasurement> rows = GpuData.read(r, DEVICES).operators();
        assertEquals(1, rows.size());
    }

    /**
     * A table of products in microseconds is refused: they would take a thousand times their roofline, where
     * measured products take one to four times it.
     */
    @Test
    void productsInMicrosecondsAreRefused(@TempDir Path dir) throws IOException {
        Path r = root(dir);
        StringBuilder ms = new StringBuilder("row_id,gpu,op,B,M,N,K,flops,latency_ms\n");
        StringBuilder us = new StringBuilder(ms);
        for (int i = 0; i < 3; i++) {
            long n = 1024L << i;
            double flops = 2.0 * 8 * n * n * n;
            // a T4 sustains some 6 of its 8 TFLOP/s in FP32 on these
            double t = flops / 6e12 * 1e3;
            ms.append(i).append(",Tesla T4,bmm,8,").append(n).append(',').append(n).append(',').append(n).append(',')
                    .append((long) flops).append(',').append(t).append('\n');
            us.append(i).append(",Tesla T4,bmm,8,").append(n).append(',').append(n).append(',').append(n).append(',')
                    .append((long) flops).append(',').append(1000 * t).append('\n');
        }
        Files.writeString(r.resolve("neusight/kernels/bmm.csv"), ms.toString());
        assertEquals(3, GpuData.read(r, DEVICES).operators().size());
        Files.writeString(r.resolve("neusight/kernels/bmm.csv"), us.toString());
        InvalidInputException e = assertThrows(InvalidInputException.class, () -> GpuData.read(r, DEVICES));
        assertTrue(e.getMessage().contains("bmm.csv") && e.getMessage().contains("times their roofline")
                && e.getMessage().contains("microseconds"), e.getMessage());
    }

    @Test
    void oneDeepBenchSheetIsReadWithoutTheOther(@TempDir Path dir) throws IOException {
        Path r = root(dir);
        Files.createDirectories(r.resolve("deepbench"));
        Files.writeString(r.resolve("deepbench/gemm.csv"), "benchmark,gpu,precision,M,N,K,transA,transB,time_ms\n"
                + "train,V100,fp32,1024,1024,1024,N,N,0.2\n");
        assertEquals(2, GpuData.read(r, DEVICES).operators().size(), "the bmm and DeepBench's product");
    }

    @Test
    void aTracePathLeavingTheRootIsRefusedBeforeItIsOpened(@TempDir Path dir) throws IOException {
        Path r = root(dir.resolve("root"));
        Path outside = dir.resolve("outside/bert_large-inf-512-8.csv");
        Files.createDirectories(outside.getParent());
        Files.writeString(outside, "secret,header\n1,2\n");
        Files.createDirectories(r.resolve("neusight/models"));
        Files.writeString(r.resolve("neusight/models/e2e.csv"), "gpu,model,phase,seq_len,batch,parallel,n_gpus,"
                + "fusion,model_n_layer,e2e_ms,node_csv,node_csv_status\n"
                + "Tesla T4,bert_large,inf,512,8,single,1,false,24,10,../../../outside/bert_large-inf-512-8.csv,ok\n");
        InvalidInputException e = assertThrows(InvalidInputException.class, () -> GpuData.read(r, DEVICES));
        assertTrue(e.getMessage().contains("e2e.csv:2") && e.getMessage().contains("leaves the models folder"),
                e.getMessage());
        assertTrue(!e.getMessage().contains("secret"), "the file outside is not read: " + e.getMessage());
    }

    @Test
    void aPublishedRunsUnknownGpuOrTimeInSecondsIsNamedAtItsLine(@TempDir Path dir) throws IOException {
        Path r = root(dir);
        Path configs = r.resolve("llm-public/configs/llama");
        Files.createDirectories(configs);
        Files.copy(Path.of("src/test/resources/transformers/llama-3-8b/config.json"),
                configs.resolve("config.json"));
        String header = "id,transformer,seq,batch,micro_batches,world_size,tensor,device,precision,measured_ms,"
                + "tokens_per_s_per_gpu\n";
        Files.writeString(r.resolve("llm-public/runs.csv"), header
                + "a,configs/llama/config.json,4096,1,8,8,1,H100,bf16,2000,\n"
                + "b,configs/llama/config.json,4096,1,8,8,1,NVIDIA H300,bf16,2000,\n");
        InvalidInputException e = assertThrows(InvalidInputException.class, () -> GpuData.read(r, DEVICES));
        assertTrue(e.getMessage().contains("runs.csv:3") && e.getMessage().contains("unknown device 'NVIDIA H300'"),
                e.getMessage());
        // 8 replicas of 8 sequences of 4,096 tokens a GPU in 2 s is 16,384 tokens/s a GPU; 2 ms is a thousand apart
        Files.writeString(r.resolve("llm-public/runs.csv"), header
                + "a,configs/llama/config.json,4096,1,8,8,1,H100,bf16,2,16384\n");
        e = assertThrows(InvalidInputException.class, () -> GpuData.read(r, DEVICES));
        assertTrue(e.getMessage().contains("runs.csv:2") && e.getMessage().contains("disagree 1000 times"),
                e.getMessage());
    }
}
