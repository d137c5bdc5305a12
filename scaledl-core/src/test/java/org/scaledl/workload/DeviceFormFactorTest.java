package org.scaledl.workload;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.Map;
import org.junit.jupiter.api.Test;
import org.scaledl.io.DeviceCatalog;

/**
 * {@link Device#formFactorIs}: a form factor is read by its letters and digits without regard to case, as a prefix
 * of the kind asked ({@code PCI-E} is PCIe, {@code SXM5} is SXM), and {@link Device#pcieCard()} and
 * {@link Device#superchip()} read it so.
 */
class DeviceFormFactorTest {
    private static Device with(String form) {
        Device b = DeviceCatalog.bundled().require("B200");
        return new Device(b.name(), b.memoryGB(), b.memoryBandwidthGBps(), b.computeUnits(), b.clockMHz(),
                b.peakMatrixGflops(), b.peakVectorGflops(), b.l2MB(), b.linkGBps(), b.kind(), b.simdBits(),
                b.matrixPeaks(), form, b.pcieGBps(), b.platform(), b.sfuPerClock(), b.boardPowerW(),
                b.architecture());
    }

    @Test
    void aFormFactorIsReadByItsLettersAndDigits() {
        Map<String, Boolean> pcie = Map.of("PCIe", true, "PCI-E", true, "pci express", true, "PCIe 5.0", true,
                "PCIE5", true, "PCI", false, "FHFL PCIe", false, "SXM6", false, "", false, "-", false);
        pcie.forEach((form, is) -> {
            assertEquals(is, with(form).pcieCard(), form);
            assertEquals(is, with(form).formFactorIs("PCIe"), form);
            // a PCIe Blackwell card takes FP8 operands in one layout only
            assertEquals(!is, with(form).fp8EitherLayout(), form);
        });
        Map<String, Boolean> superchip = Map.of("Superchip", true, "super-chip", true, "Superchip NVL72", true,
                "Super", false, "SXM", false, "", false);
        superchip.forEach((form, is) -> assertEquals(is, with(form).superchip(), form));
        assertEquals(true, with("SXM5").formFactorIs("SXM"));
        assertEquals(false, with("SXM5").formFactorIs("SXM6"));
    }
}
