"""BernsteinFusion's class-shared multi-class model: the (row, class) pairs, the multinomial
fit, the top-label correction, its source, fitter and fitted form."""
