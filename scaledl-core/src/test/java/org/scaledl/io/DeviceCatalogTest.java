package org.scaledl.io;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.scaledl.InvalidInputException;
import org.scaledl.workload.Device;

class DeviceCatalogTest {
    @Test
    void bundledCatalogDescribesNeuSightAndDeepBenchGpus() {
        DeviceCatalog c = DeviceCatalog.bundled();
        assertEquals(22, c.devices().size());
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

    @Test
    void unknownDeviceNamesTheKnownOnes() {
        InvalidInputException e = assertThrows(InvalidInputException.class,
                () -> DeviceCatalog.bundled().require("Voodoo2"));
        assertTrue(e.getMessage().contains("Voodoo2") && e.getMessage().contains("Tesla T4"), e.getMessage());
    }

    @Test
    void userFileOverridesAndErrorsNameTheLine(@TempDir Path dir) throws IOException {
        Path f = dir.resolve("mine.csv");
        Files.writeString(f, "gpu,dev_mem_GB,mem_bw_GBps,num_sm_or_cu,freq_MHz,fp32_peak_GFLOPS,l2_cache_MB\n"
                + "Tesla T4,16,300,40,1590,8000,4\n");
        DeviceCatalog c = DeviceCatalog.read(f).with(DeviceCatalog.bundled());
        assertEquals(300, c.require("Tesla T4").memoryBandwidthGBps());
        assertEquals(23 - 1, c.devices().size());

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
}
