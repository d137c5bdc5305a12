package org.scaledl.doe;

import java.util.List;

/**
 * A chosen experimental design.
 *
 * @param chosen       indices of the chosen candidate rows, ascending (fixed rows not included)
 * @param logDet       {@code log det(XₙᵀXₙ + ridge·I)} of the chosen rows together with any fixed rows
 * @param dEfficiency  {@code (det(XₙᵀXₙ/n) / det(XᵀX/N))^(1/p)} against the whole candidate set, on the directions
 *                     the candidates can estimate where their information matrix is rank-deficient (NaN when it has
 *                     none: every column zero)
 * @param exchanges    exchanges applied in the winning start (a {@link RepresentativeDesign}'s: its swaps)
 * @param logDetTrace  log det after each exchange of the winning start, starting with the initial design (a
 *                     {@link RepresentativeDesign}'s: its one log det, its swaps lowering a distance)
 */
public record Design(List<Integer> chosen, double logDet, double dEfficiency, int exchanges,
        List<Double> logDetTrace) {

    /** Copies. */
    public Design {
        chosen = List.copyOf(chosen);
        logDetTrace = List.copyOf(logDetTrace);
    }
}
