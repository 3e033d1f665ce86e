"""BernsteinFusion's binary models: the default semi-parametric logistic model and the
rank-only model, their data, fitters, bootstrap intervals and fitted form."""
