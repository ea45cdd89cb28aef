/* The chi-square p-value of conform's sampling-stats: the regularized upper incomplete gamma
 * Q(a, x), by the series of P below a + 1 and Legendre's continued fraction (modified Lentz)
 * above, with libm's lgamma for the prefactor. */
#include <float.h>
#include <math.h>

#include "replay/sample_priv.h"

#define ITMAX 100000
#define EPS 1e-15

/* P(a, x) by its series: x^a e^-x / Gamma(a+1) * sum x^n / ((a+1)...(a+n)). */
static double p_series(double a, double x)
{
    double ap = a, sum = 1.0 / a, del = sum;
    for (int n = 0; n < ITMAX; n++) {
        ap += 1;
        del *= x / ap;
        sum += del;
        if (fabs(del) < fabs(sum) * EPS)
            break;
    }
    return sum * exp(-x + a * log(x) - lgamma(a));
}

/* Q(a, x) by the continued fraction of Gamma(a, x). */
static double q_fraction(double a, double x)
{
    const double tiny = DBL_MIN / EPS;
    double b = x + 1 - a, c = 1 / tiny, d = 1 / b, h = d;
    for (int i = 1; i < ITMAX; i++) {
        double an = -i * (i - a);
        b += 2;
        d = an * d + b;
        if (fabs(d) < tiny)
            d = tiny;
        c = b + an / c;
        if (fabs(c) < tiny)
            c = tiny;
        d = 1 / d;
        double del = d * c;
        h *= del;
        if (fabs(del - 1) < EPS)
            break;
    }
    return exp(-x + a * log(x) - lgamma(a)) * h;
}

double lg_gamma_q(double a, double x)
{
    if (!(a > 0) || !(x >= 0) || isinf(a))
        return NAN;
    if (x == 0)
        return 1;
    if (isinf(x))
        return 0;
    if (x < a + 1) {
        double q = 1 - p_series(a, x);
        return q < 0 ? 0 : q;
    }
    return q_fraction(a, x);
}

double lg_chisq_sf(double chi2, double dof)
{
    if (!(dof >= 1) || !(chi2 >= 0))
        return NAN;
    return lg_gamma_q(dof / 2, chi2 / 2);
}
