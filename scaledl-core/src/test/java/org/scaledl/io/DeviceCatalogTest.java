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
import org.scaledl.workload.Device;

class DeviceCatalogTest {
    @Test
    void bundledCatalogDescribesNeuSightAndDeepBenchGpus() {
        DeviceCatalog c = DeviceCatalog.bundled();
        assertEquals(47, c.devices().size());
        Device h100 = c.require("NVIDIA H100 80GB HBM3");
        assertEquals(132, h100.computeUnits());
        assertEquals(3430, h100.memoryBandwidthGBps());
        assertEquals(h100, c.require("NVIDIA_H100_80GB_HBM3"), "label directory alias");
        assertEquals(450, h100.link().orElseThrow());
        assertEquals(300, c.require("NVIDIA A100-SXM4-40GB").link().orElseThrow());
        assertTrue(c.require("Tesla T4").link().isEmpty(), "PCIe card: no link described");
        assertEquals(h100, c.require("nvidia h100-80gb hbm3"), "case and punctuation are ignored");
        Device mi100 = c.require("AMD Instinct MI100");
        assertTrue(mi100.peakMatrixGflops() > mi100.peakVectorGflops(), "AMD rows have separate peaks");
        assertEquals(19492e9 / 1555e9, c.require("NVIDIA A100-PCIE-40GB").ridgeFlopsPerByte(true), 1e-9);
    }

    /**
     * The Rubin row, from its preliminary data sheet: found under the names Megatron-Bridge and NCCL use, a superchip
     * whose standard system is the NVL72 rack (trays of 4, one NVLink 6 domain of 72, 1.6 Tb/s a GPU), with block-scaled
     * FP8 and FP4 units at the peaks the row derives (FP8 half the NVFP4 training figure, BF16 half FP8).
     */
    @Test
    void rubinIsDescribedFromItsDataSheet() {
        DeviceCatalog c = DeviceCatalog.bundled();
        Device r = c.require("VR200");
        for (String name : List.of("NVIDIA Rubin", "Rubin", "R200", "Vera Rubin NVL72", "vr nvl72")) {
            assertEquals(r, c.require(name), name);
        }
        assertTrue(r.superchip() && r.tensorMemoryAccelerator(), r.toString());
        assertEquals(288, r.memoryGB());
        assertEquals(22000, r.memoryBandwidthGBps());
        assertEquals(org.scaledl.workload.Precision.MXFP8, r.runs(org.scaledl.workload.Precision.MXFP8).orElseThrow());
        double fp4 = r.peakFlopsPerSecond(org.scaledl.workload.Precision.NVFP4, true);
        double fp8 = r.peakFlopsPerSecond(org.scaledl.workload.Precision.FP8, true);
        double bf16 = r.peakFlopsPerSecond(org.scaledl.workload.Precision.BF16, true);
        assertEquals(35e15, fp4, 1e9);
        assertEquals(fp4 / 2, fp8, 1e9);
        assertEquals(fp8 / 2, bf16, 1e9);
        org.scaledl.workload.Topology t = org.scaledl.workload.Topology.assumedFor(r);
        assertEquals(4, t.gpusPerNode());
        assertEquals(72, t.nvlinkDomain());
        assertEquals(org.scaledl.workload.Topology.Link.NVSWITCH, t.link());
        assertEquals(4 * 1600, t.interNodeGbps(), 1e-9);
    }

    /**
     * The special-function units' exponentials: 16 per SM and clock where the catalog gives none, Blackwell Ultra
     * twice Blackwell's (GB300 and GB200 have the same SMs and clock); a user's row may state its own, and a rate of 0
     * or below is refused naming the file's line.
     */
    @Test
    void exponentialRatesFollowTheSpecialFunctionUnits(@TempDir Path dir) throws IOException {
        DeviceCatalog c = DeviceCatalog.bundled();
        Device h100 = c.require("NVIDIA H100 80GB HBM3");
        assertEquals(h100.computeUnits() * h100.clockMHz() * 1e6 * 16, h100.exponentialsPerSecond(), 1);
        assertEquals(0, h100.sfuPerClock());
        Device gb200 = c.require("NVIDIA GB200");
        Device gb300 = c.require("NVIDIA GB300");
        assertEquals(2 * gb200.exponentialsPerSecond(), gb300.exponentialsPerSecond(), 1);
        assertEquals(gb200.peakFlopsPerSecond(org.scaledl.workload.Precision.BF16, true),
                gb300.peakFlopsPerSecond(org.scaledl.workload.Precision.BF16, true));
        assertEquals(32, c.require("B300").sfuPerClock());
        String head = "name,memory_GB,memory_bw_GBps,sms,boost_clock_MHz,l2_MB,fp32_vector_TFLOPS,sfu_per_clk_per_sm\n";
        Path ok = dir.resolve("ok.csv");
        Files.writeString(ok, head + "X1,80,3000,100,1000,50,60,64\n");
        assertEquals(100 * 1000e6 * 64, DeviceCatalog.read(ok).require("X1").exponentialsPerSecond(), 1);
        Path bad = dir.resolve("bad.csv");
        Files.writeString(bad, head + "X1,80,3000,100,1000,50,60,0\n");
        InvalidInputException e = assertThrows(InvalidInputException.class, () -> DeviceCatalog.read(bad));
        assertTrue(e.getMessage().contains("bad.csv") && e.getMessage().contains("sfu_per_clk_per_sm"),
                e.getMessage());
    }

    /**
     * The data-sheet catalog: every GPU the GPU issue names, under the names PyTorch reports, with per-precision
     * matrix peaks, form factors and links; the GPUs NeuSight and DeepBench measured keep the figures their
     * measurements were described with.
     */
    @Test
    void catalogHasPrecisionPeaksFormFactorsAndTorchNames() {
        DeviceCatalog c = DeviceCatalog.bundled();
        for (String name : new String[] {"Tesla V100-PCIE-16GB", "Tesla V100-PCIE-32GB", "Tesla V100-SXM2-16GB",
            "Tesla V100-SXM2-32GB", "NVIDIA A100-PCIE-40GB", "NVIDIA A100 80GB PCIe", "NVIDIA A100-SXM4-40GB",
            "NVIDIA A100-SXM4-80GB", "NVIDIA H100 PCIe", "NVIDIA H100 80GB HBM3", "NVIDIA H200", "NVIDIA L4",
            "NVIDIA L40S", "NVIDIA A10", "Tesla T4", "Tesla P100-PCIE-16GB", "Tesla P4", "AMD Instinct MI100",
            "AMD Instinct MI210", "AMD Instinct MI250", "AMD Instinct MI300X"}) {
            assertTrue(c.find(name).isPresent(), name);
        }
        Device a100 = c.require("NVIDIA A100-SXM4-80GB");
        assertEquals(312e12, a100.peakFlopsPerSecond(org.scaledl.workload.Precision.FP16, true), 1e6);
        assertEquals(156e12, a100.peakFlopsPerSecond(org.scaledl.workload.Precision.TF32, true), 1e6);
        assertEquals(19.5e12, a100.peakFlopsPerSecond(org.scaledl.workload.Precision.FP32, true), 1e6);
        assertTrue(a100.matrixUnits(org.scaledl.workload.Precision.BF16) && !a100.matrixUnits(
                org.scaledl.workload.Precision.FP32));
        assertEquals("SXM4", a100.formFactor());
        Device v100 = c.require("V100");
        assertEquals("Tesla V100-SXM2-16GB", v100.name(), "DeepBench's V100 ran in a DGX-1");
        assertEquals(v100.peakMatrixGflops(), v100.peakFlopsPerSecond(org.scaledl.workload.Precision.BF16, true)
                / 1e9, 1e-9, "no BF16 units: FP32");
        assertTrue(c.require("Tesla T4").pcieGBps() > 0 && c.require("Tesla T4").link().isEmpty());
        assertEquals(c.require("AMD Instinct MI250"), c.require("AMD Instinct MI250X / MI250"));
    }

    /**
     * The GPUs of 2025-26 with their low-precision peaks and the system they are built into: a GB200 sits four to a
     * tray in an NVLink domain of 72; a GPU without a precision's matrix units runs it at its fallback.
     */
    @Test
    void newestGpusCarryLowPrecisionPeaksAndTheirPlatform() {
        DeviceCatalog c = DeviceCatalog.bundled();
        org.scaledl.workload.Precision fp8 = org.scaledl.workload.Precision.FP8;
        org.scaledl.workload.Precision mx = org.scaledl.workload.Precision.MXFP8;
        org.scaledl.workload.Precision fp4 = org.scaledl.workload.Precision.NVFP4;
        Device gb200 = c.require("GB200");
        assertEquals(4, gb200.platform().gpusPerNode());
        assertEquals(72, gb200.platform().nvlinkDomain());
        assertEquals("NVLink5", gb200.platform().linkKind());
        assertEquals(2 * gb200.peakFlopsPerSecond(fp8, true), gb200.peakFlopsPerSecond(fp4, true), 1e6);
        assertEquals(fp4, gb200.runs(fp4).orElseThrow());
        Device h100 = c.require("H100 SXM");
        assertEquals(1978.9e12, h100.peakFlopsPerSecond(fp8, true), 1e6);
        assertEquals(org.scaledl.workload.Precision.FP8_BLOCK, h100.runs(mx).orElseThrow(), "Hopper has no MX");
        assertEquals(org.scaledl.workload.Precision.FP8_BLOCK, h100.runs(fp4).orElseThrow());
        assertTrue(c.require("A100 80GB").runs(fp8).isEmpty(), "Ampere has no FP8 units: refused");
        assertTrue(c.require("V100").runs(org.scaledl.workload.Precision.BF16).isEmpty(), "Volta has no BF16");
        assertEquals(org.scaledl.workload.Precision.FP32, c.require("V100").runs(
                org.scaledl.workload.Precision.TF32).orElseThrow(), "TF32 falls back to FP32");
        for (String name : new String[] {"B200", "B300", "GB300", "H200", "H20", "MI325X", "MI355X", "L40", "A40",
            "RTX 6000 Ada", "RTX 4090", "RTX 5090", "A100", "H100", "L40S"}) {
            assertTrue(c.find(name).isPresent(), name);
        }
    }

    /**
     * A precision is data: each reads the catalog column its {@code peakColumn} names, so a catalog with a column for
     * a new format gives the new format's peak with no code (what adding FP8 took: one constant, one column).
     */
    @Test
    void everyPrecisionReadsItsOwnCatalogColumn(@TempDir Path dir) throws IOException {
        Path f = dir.resolve("future.csv");
        StringBuilder header = new StringBuilder("name,memory_GB,memory_bw_GBps,sms,boost_clock_MHz,l2_MB,"
                + "fp32_vector_TFLOPS");
        StringBuilder row = new StringBuilder("Future GPU,100,5000,100,2000,50,100");
        java.util.Set<String> columns = new java.util.TreeSet<>();
        for (org.scaledl.workload.Precision p : org.scaledl.workload.Precision.values()) {
            if (p != org.scaledl.workload.Precision.FP32) {
                columns.add(p.peakColumn());
            }
        }
        columns.add("fp6");
        int k = 1;
        java.util.Map<String, Double> peak = new java.util.HashMap<>();
        for (String col : columns) {
            header.append(',').append(col).append("_TFLOPS");
            row.append(',').append(1000 * k);
            peak.put(col, 1000e12 * k++);
        }
        Files.writeString(f, header + "\n" + row + "\n");
        Device d = DeviceCatalog.read(f).require("Future GPU");
        for (org.scaledl.workload.Precision p : org.scaledl.workload.Precision.values()) {
            double expected = p == org.scaledl.workload.Precision.FP32 ? 100e12 : peak.get(p.peakColumn());
            assertEquals(expected, d.peakFlopsPerSecond(p, true), 1e3, p.label());
            assertEquals(p, d.runs(p).orElseThrow(), p.label());
        }
        assertEquals(peak.get("fp6") / 1e9, d.matrixPeak("fp6"), 1e-6, "a column no precision reads yet");
    }

    @Test
    void unknownDeviceNamesTheKnownOnes() {
        InvalidInputException e = assertThrows(InvalidInputException.class,
                () -> DeviceCatalog.bundled().require("Voodoo2"));
        assertTrue(e.getMessage().contains("Voodoo2") && e.getMessage().contains("scaledl devices")
                && e.getMessage().contains("--devices"), e.getMessage());
        e = assertThrows(InvalidInputException.class, () -> DeviceCatalog.bundled().require("RTX"));
        assertTrue(e.getMessage().contains("ambiguous") && e.getMessage().contains("NVIDIA GeForce RTX 4090"),
                e.getMessage());
        assertEquals("AMD Instinct MI300X", DeviceCatalog.bundled().require("MI300").name(), "an unambiguous part");
        // spaces and punctuation are ignored, letters outside ASCII are not: no accent or script turns into an alias
        assertEquals("NVIDIA H100 80GB HBM3", DeviceCatalog.bundled().require("h100-sxm").name());
        for (String name : new String[] {"H1\u00e900", "H100 SXM\u65e5\u672c", "A100\u00a080GB\u00e9"}) {
            assertThrows(InvalidInputException.class, () -> DeviceCatalog.bundled().require(name), name);
        }
    }

    /**
     * A short name read as one GPU names the others it fits from a word's start on: A100 the 40 GB and PCIe parts
     * beside the 80 GB SXM it is an alias of; B200 not the GB200 (no word of that name starts so); a full name none.
     */
    @Test
    void aShortNameSaysTheOtherGpusItFits() {
        DeviceCatalog c = DeviceCatalog.bundled();
        Device a100 = c.require("A100");
        assertEquals("NVIDIA A100-SXM4-80GB", a100.name());
        assertEquals(java.util.Set.of("NVIDIA A100-SXM4-40GB", "NVIDIA A100 80GB PCIe", "NVIDIA A100-PCIE-40GB"),
                java.util.Set.copyOf(c.alsoFitting("A100", a100).stream().map(Device::name).toList()));
        assertEquals(List.of(), c.alsoFitting("B200", c.require("B200")));
        assertEquals(List.of(), c.alsoFitting("NVIDIA A100-SXM4-80GB", a100));
        assertEquals(List.of(), c.alsoFitting("H20", c.require("H20")), "H20 names the H20 whole, not the H200");
        assertEquals(List.of("NVIDIA A100 80GB PCIe"), c.alsoFitting("a100-80gb", a100).stream().map(Device::name)
                .toList());
    }

    /**
     * A user's --devices file adds GPUs beside the bundled ones and never replaces one: a row naming a bundled GPU (by
     * name or alias) is refused naming its line, so is a GPU named twice and a name with terminal escapes.
     */
    @Test
    void aUsersDevicesNeverReplaceBundledOnes(@TempDir Path dir) throws IOException {
        String header = "gpu,dev_mem_GB,mem_bw_GBps,num_sm_or_cu,freq_MHz,fp32_peak_GFLOPS,l2_cache_MB\n";
        Path mine = dir.resolve("mine.csv");
        Files.writeString(mine, header + "My Accelerator,16,300,40,1590,8000,4\n");
        DeviceCatalog c = DeviceCatalog.bundled().plusUser(DeviceCatalog.read(mine));
        assertEquals(48, c.devices().size());
        assertEquals(300, c.require("My Accelerator").memoryBandwidthGBps());
        Path clash = dir.resolve("clash.csv");
        Files.writeString(clash, header + "x,1,1,1,1000,1,1\nNVIDIA H100 80GB HBM3,80,1,1,1000,1,1\n");
        InvalidInputException e = assertThrows(InvalidInputException.class,
                () -> DeviceCatalog.bundled().plusUser(DeviceCatalog.read(clash)));
        assertTrue(e.getMessage().contains("clash.csv:3") && e.getMessage().contains("bundled"), e.getMessage());
        // a part of a bundled name would take that name's typing over ("H100 80GB HBM3" then meant the user's row)
        Path part = dir.resolve("part.csv");
        Files.writeString(part, header + "h100 80gb hbm3,80,1,1,1000,1,1\n");
        e = assertThrows(InvalidInputException.class, () -> DeviceCatalog.bundled().plusUser(DeviceCatalog.read(part)));
        assertTrue(e.getMessage().contains("part.csv:2") && e.getMessage().contains("part of the bundled 'NVIDIA H100 "
                + "80GB HBM3'"), e.getMessage());
        // a part of several GPUs' names was ambiguous typed before the row and takes nothing over: kept (the V100S)
        Path several = dir.resolve("several.csv");
        Files.writeString(several, header + "V100S,32,1134,80,1601,16400,6\n");
        assertEquals("V100S", DeviceCatalog.bundled().plusUser(DeviceCatalog.read(several)).require("V100S").name());
        Path twice = dir.resolve("twice.csv");
        Files.writeString(twice, header + "Mine,1,1,1,1000,1,1\nmine,2,1,1,1000,1,1\n");
        e = assertThrows(InvalidInputException.class, () -> DeviceCatalog.read(twice));
        assertTrue(e.getMessage().contains("twice.csv:3") && e.getMessage().contains("twice.csv:2"), e.getMessage());
        Path escape = dir.resolve("escape.csv");
        Files.writeString(escape, header + "Evil\u001b[31m,1,1,1,1000,1,1\n");
        e = assertThrows(InvalidInputException.class, () -> DeviceCatalog.read(escape));
        assertTrue(e.getMessage().contains("control") && !e.getMessage().contains("\u001b"), e.getMessage());
    }

    @Test
    void userFileOverridesAndErrorsNameTheLine(@TempDir Path dir) throws IOException {
        Path f = dir.resolve("mine.csv");
        Files.writeString(f, "gpu,dev_mem_GB,mem_bw_GBps,num_sm_or_cu,freq_MHz,fp32_peak_GFLOPS,l2_cache_MB\n"
                + "Tesla T4,16,300,40,1590,8000,4\n");
        DeviceCatalog c = DeviceCatalog.read(f).with(DeviceCatalog.bundled());
        assertEquals(300, c.require("Tesla T4").memoryBandwidthGBps());
        assertEquals(300, c.require("T4").memoryBandwidthGBps(), "the user's T4 under every alias");
        assertEquals(47, c.devices().size());

        Path bad = dir.resolve("bad.csv");
        Files.writeString(bad, "gpu,dev_mem_GB,mem_bw_GBps,num_sm_or_cu,freq_MHz,l2_cache_MB\n"
                + "X,16,300,40,1590,4\n");
        InvalidInputException e = assertThrows(InvalidInputException.class, () -> DeviceCatalog.read(bad));
        assertTrue(e.getMessage().contains("bad.csv:2") && e.getMessage().contains("peak"), e.getMessage());

        Path zero = dir.resolve("zero.csv");
        Files.writeString(zero, "gpu,dev_mem_GB,mem_bw_GBps,num_sm_or_cu,freq_MHz,fp32_peak_GFLOPS,l2_cache_MB\n"
                + "X,16,0,40,1590,8000,4\n");
        e = assertThrows(InvalidInputException.class, () -> DeviceCatalog.read(zero));
        assertTrue(e.getMessage().contains("zero.csv:2"), e.getMessage());
    }

    /**
     * A row's GPU-to-GPU link: a kind that is none of NVLink with its generation, Infinity Fabric or none is refused
     * naming the line (an unknown kind was priced as an NVLink without a switch), as is an NVLink without its
     * bandwidth (priced as PCIe); an NVLink 3+ row that names no domain is switched across its node, as one that names
     * the node is (it was priced point to point).
     */
    @Test
    void aRowsLinkIsOneTheCatalogDescribes(@TempDir Path dir) throws IOException {
        String head = "name,memory_GB,memory_bw_GBps,sms,boost_clock_MHz,l2_MB,fp32_vector_TFLOPS,bf16_TFLOPS,"
                + "link_kind,link_GBps,gpus_per_node,nvlink_domain\n";
        String row = "X1,80,3350,132,1980,50,66.9,989.4,";
        java.util.Map<String, String> refused = java.util.Map.of("NVLinkX,450,8,8", "link kind must be NVLink",
                "abc,450,8,8", "link kind must be NVLink", "NVLink,450,8,8", "link kind must be NVLink",
                "\u001b[2J,450,8,8", "link kind must be NVLink", "NVLink4,,8,8", "needs link_GBps");
        for (java.util.Map.Entry<String, String> c : refused.entrySet()) {
            Path bad = dir.resolve("bad.csv");
            Files.writeString(bad, head + row + c.getKey() + "\n");
            InvalidInputException e = assertThrows(InvalidInputException.class, () -> DeviceCatalog.read(bad),
                    c.getKey());
            assertTrue(e.getMessage().contains("bad.csv:2") && e.getMessage().contains(c.getValue())
                    && e.getMessage().chars().noneMatch(ch -> ch < 0x20), c.getKey() + ": " + e.getMessage());
        }
        Path ok = dir.resolve("ok.csv");
        Files.writeString(ok, head + row + "NVLink4,450,8,8\n" + "X2,80,3350,132,1980,50,66.9,989.4,nvlink4,450,8,\n"
                + "X3,80,3350,132,1980,50,66.9,989.4,none,,8,\n" + "X4,80,3350,132,1980,50,66.9,989.4,,,,\n"
                + "X5,80,3350,132,1980,50,66.9,989.4,InfinityFabric,448,8,8\n");
        DeviceCatalog c = DeviceCatalog.read(ok);
        assertEquals(org.scaledl.workload.Topology.Link.NVSWITCH,
                org.scaledl.workload.Topology.assumedFor(c.require("X1")).link());
        assertEquals(org.scaledl.workload.Topology.assumedFor(c.require("X1")),
                org.scaledl.workload.Topology.assumedFor(c.require("X2")), "no domain: the node's");
        assertEquals(org.scaledl.workload.Topology.Link.PCIE,
                org.scaledl.workload.Topology.assumedFor(c.require("X3")).link());
        assertEquals(org.scaledl.workload.Topology.Link.PCIE,
                org.scaledl.workload.Topology.assumedFor(c.require("X4")).link());
        assertEquals(org.scaledl.workload.Topology.Link.INFINITY_FABRIC,
                org.scaledl.workload.Topology.assumedFor(c.require("X5")).link());
    }
}
