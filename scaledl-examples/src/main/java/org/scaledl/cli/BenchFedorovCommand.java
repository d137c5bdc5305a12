package org.scaledl.cli;

import java.util.Arrays;
import java.util.Locale;
import java.util.concurrent.Callable;
import org.scaledl.doe.Design;
import org.scaledl.doe.FedorovExchange;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** {@code scaledl bench-fedorov}: how the exchange's cost grows with candidates N and terms p. */
@Command(name = "bench-fedorov", mixinStandardHelpOptions = true, versionProvider = Main.VersionProvider.class,
        description = "Time Fedorov exchange passes for N candidates x p terms "
        + "(n = 2p runs) and one full design.")
final class BenchFedorovCommand implements Callable<Integer> {
    @Option(names = "--quick", description = "Only N up to 10,000")
    boolean quick;

    @Override
    public Integer call() {
        int[] ns = quick ? new int[] {1_000, 10_000} : new int[] {1_000, 10_000, 100_000};
        int[] ps = {10, 30, 50};
        System.out.printf(Locale.ROOT, "%9s %4s %5s %14s %16s%n", "N", "p", "n", "one pass (ms)", "ns per n*N*p");
        for (int total : ns) {
            for (int p : ps) {
                double[][] x = BenchCommand.gaussian(total, p, 11);
                int n = 2 * p;
                double[] t = new double[3];
                for (int rep = 0; rep < t.length; rep++) {
                    long t0 = System.nanoTime();
                    new FedorovExchange(x, n).starts(1).maxPasses(1).seed(rep).design();
                    t[rep] = (System.nanoTime() - t0) / 1e6;
                }
                Arrays.sort(t);
                System.out.printf(Locale.ROOT, "%9d %4d %5d %14.1f %16.3f%n", total, p, n, t[1],
                        t[1] * 1e6 / ((double) n * total * p));
            }
        }
        double[][] x = BenchCommand.gaussian(10_000, 30, 12);
        long t0 = System.nanoTime();
        Design d = new FedorovExchange(x, 60).starts(1).design();
        System.out.printf(Locale.ROOT, "full design N=10000 p=30 n=60, one start: %.0f ms, %d exchanges%n",
                (System.nanoTime() - t0) / 1e6, d.exchanges());
        return 0;
    }
}
