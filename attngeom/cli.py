"""The ``attngeom`` command line: parse, call the library, print.  No mathematics here.

Exit codes: 0 the claim holds (proved / verified / consistent), 1 refuted, 2 bad input or
not-applicable, always with one line on stderr and no traceback.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from attngeom import api, claim_index
from attngeom.core import __version__
from attngeom.kernels.backend import BACKENDS, DEVICES
from attngeom.core.claim import FORMATS, METHODS
from attngeom.core.errata_report import FORMATS as ERRATA_FORMATS
from attngeom.core.errors import BadInput, NotApplicable
from attngeom.kernels.threads import configure as configure_threads
from attngeom.registry import SOURCES

if TYPE_CHECKING:
    from attngeom.core.claim import CheckContext
    from attngeom.core.verdict import Verdict

# The claim modules, the certificate machinery and the executors load when a command needs
# them: options, `attngeom list` and --help come from the claim index (attngeom.claim_index),
# and `verify CLAIM` imports only CLAIM's module (attngeom.registry.REGISTRY.get).


def __getattr__(name: str):
    """``attngeom.cli.REGISTRY``: the merged registry (:data:`attngeom.registry.REGISTRY`)."""
    if name == "REGISTRY":
        return _registry()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _registry():
    from attngeom.registry import REGISTRY
    return REGISTRY


def _claim_param_options(params):
    """Decorator adding one ``--name`` option per claim parameter (all parsed by the claim)."""
    def decorate(func):
        for p in reversed(list(params.values())):
            if p.kind == "flag":
                func = click.option(p.option, p.name, is_flag=True, default=None, help=p.help)(func)
            else:
                func = click.option(p.option, p.name, default=None, metavar=p.kind.upper(),
                                    help=p.help)(func)
        return func
    return decorate


def _check_options(func):
    func = click.option("--json", "as_json", is_flag=True, help="print the verdict as JSON")(func)
    func = click.option("--seed", type=int, default=0, show_default=True, help="random seed")(func)
    func = click.option("--samples", type=click.IntRange(min=1), default=None,
                        help="number of random points (default per method)")(func)
    func = click.option("--device", type=click.Choice(DEVICES), default="cpu",
                        show_default=True)(func)
    func = click.option("--backend", type=click.Choice(BACKENDS), default="numpy",
                        show_default=True, help="array backend of --method numeric")(func)
    func = click.option("--method", type=click.Choice(("auto",) + METHODS), default="auto",
                        show_default=True)(func)
    return func


def _executor_options(workers_default="1"):
    """Decorator adding --workers N / --scheduler ADDRESS: where the independent tasks of a
    command run (attngeom.core.executor); results are the same wherever they run."""
    def decorate(func):
        func = click.option("--scheduler", default=None, metavar="ADDRESS",
                            help="run the tasks on the Dask cluster whose scheduler is at "
                                 "ADDRESS (tcp://host:8786; needs attngeom[dask])")(func)
        return click.option("--workers", type=int, default=None, metavar="N",
                            help=f"run the tasks in N local worker processes (1: in this "
                                 f"process; default: {workers_default})")(func)
    return decorate


def _terminal_progress(iterable, label="", length=None):
    with click.progressbar(iterable, label=label, length=length, file=sys.stderr) as bar:
        yield from bar


def _output_file(what: str, suffixes: tuple[str, ...] | None = None):
    """A click callback: the option's file, checked as an output target before any work
    (:func:`attngeom.core.atomic_files.output_file`: no symlink, device or /proc)."""
    def check(ctx, param, value):
        if value is None:
            return None
        from attngeom.core.atomic_files import output_file
        return str(output_file(value, what, suffixes))
    return check


def _progress(as_json):
    """The terminal progress bar, or None when stderr is no terminal or output is JSON."""
    return _terminal_progress if sys.stderr.isatty() and not as_json else None


def _context(seed, samples, backend, device, as_json) -> CheckContext:
    from attngeom.core.claim import CheckContext
    progress = _progress(as_json)
    return CheckContext(seed=seed, samples=samples, backend=backend, device=device,
                        **({"progress": progress} if progress else {}))


def _print_verdict(verdict: Verdict, as_json: bool) -> int:
    """The verdict on stdout (:func:`attngeom.core.verdict_format.format_verdict`, or JSON); the
    exit code.  Not-applicable: with --json the JSON still goes to stdout, and either way
    one line on stderr (:func:`_raise_if_not_applicable`)."""
    from attngeom.core.verdict import Status
    from attngeom.core.verdict_format import format_verdict
    if as_json:
        click.echo(json.dumps(verdict.to_json(), indent=1, default=str))
    elif verdict.status is not Status.NOT_APPLICABLE:
        click.echo(format_verdict(verdict))
    _raise_if_not_applicable(verdict)
    return verdict.exit_code


def _raise_if_not_applicable(verdict: Verdict) -> None:
    """Not-applicable ends every command the same way: ``attngeom: not-applicable:
    HYPOTHESIS`` on stderr, exit code 2 (README, "Exit codes")."""
    from attngeom.core.verdict import Status
    if verdict.status is Status.NOT_APPLICABLE:
        raise NotApplicable(verdict.summary)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="attngeom")
@click.option("--threads", default=None, metavar="N|auto",
              help="BLAS / OpenMP / torch / jax threads of every command (default: "
                   "$ATTNGEOM_THREADS, else auto: 1, and the free cores for large dense "
                   "linear algebra; attngeom.kernels.threads)")
def cli(threads):
    """attngeom: executable claims about the geometry of attention.

    `attngeom list` shows the claims; `attngeom verify CLAIM --d D --t T --a A` checks one.
    """
    configure_threads(threads)


@cli.command("list")
@click.option("--source", type=click.Choice(SOURCES), default=None, help="only this paper")
@click.option("--json", "as_json", is_flag=True)
def list_claims(source, as_json):
    """List the registered claims."""
    claims = api.claims(source)
    if as_json:
        click.echo(json.dumps(list(claims), indent=1))
        return 0
    for line in claims.lines():
        click.echo(line)
    return 0


@cli.command()
@click.argument("claim_id", metavar="CLAIM")
@_claim_param_options(claim_index.all_params())
@_check_options
def verify(claim_id, method, backend, device, samples, seed, as_json, **params):
    """Check CLAIM at the given parameters and print the verdict."""
    claim = _registry().get(claim_id)
    verdict = claim.verify(params, method, _context(seed, samples, backend, device, as_json))
    return _print_verdict(verdict, as_json)


@cli.command()
@click.argument("claim_id", metavar="CLAIM")
@_claim_param_options(claim_index.all_params())
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="text", show_default=True)
@click.option("--limit", type=click.IntRange(min=1), default=None, help="show at most N objects")
def show(claim_id, fmt, limit, **params):
    """Print the objects CLAIM is about (polynomials, formulas) in text, LaTeX, M2 or JSON."""
    click.echo(api.show(claim_id, fmt=fmt, limit=limit, **params))
    return 0


@cli.command("verify-poly", context_settings={"ignore_unknown_options": True})
@click.argument("words", nargs=-1, required=True, type=click.UNPROCESSED, metavar="POLYNOMIAL")
@_claim_param_options(claim_index.verify_poly_params())
@_check_options
def verify_poly(words, method, backend, device, samples, seed, as_json, **params):
    """Is POLYNOMIAL (Macaulay2 syntax, labels as `show --format m2` prints them) in J?

    A polynomial may start with a minus sign ("-y_((1,1),(1,1),(1,1)) + ..."): words that
    are not options of this command are read as the polynomial."""
    from attngeom.lightning_alg.user_polynomial import PolynomialClaim
    polynomial = " ".join(words)
    claim = PolynomialClaim(polynomial)
    verdict = claim.verify(params, method, _context(seed, samples, backend, device, as_json))
    verdict.params = {"polynomial": polynomial, **verdict.params}
    return _print_verdict(verdict, as_json)


@cli.command()
@click.argument("claim_id", metavar="[CLAIM]", required=False)
@_claim_param_options(claim_index.all_params())
@_check_options
@click.option("--suite", type=click.Choice(("paper",)), default=None,
              help="certify every registered claim at its paper's examples")
@click.option("--claims", "claim_ids", default=None, metavar="ID,...",
              help="with --suite: only these claims")
@click.option("--source", type=click.Choice(SOURCES), default=None,
              help="with --suite: only this paper's claims")
@click.option("--force", is_flag=True, help="rewrite certificates that are already up to date")
@click.option("--out", "out_dir", type=click.Path(file_okay=False), required=True,
              help="directory for the JSON certificates")
@_executor_options()
def certify(claim_id, suite, claim_ids, source, force, out_dir, workers, scheduler, method,
            backend, device, samples, seed, as_json, **params):
    """Write a re-checkable JSON certificate of CLAIM at the given parameters (or a suite).

    A certificate already in DIR that would be written again as it is (same claim,
    parameters, method, seed, samples, backend, device, toolkit version and digest of the
    claim's objects) is kept and reported "skipped (up to date)"; --force rewrites it."""
    run = api.certify(claim_id, out=out_dir, suite=suite, claim_ids=claim_ids, source=source,
                      force=force, method=method, backend=backend, device=device, seed=seed,
                      samples=samples, workers=workers, scheduler=scheduler,
                      progress=_progress(as_json), **params)
    click.echo(json.dumps(list(run), indent=1) if as_json else str(run))
    return 0


@cli.command("check-certificates")
@click.argument("directory", type=click.Path())
@click.option("--json", "as_json", is_flag=True)
@click.option("--junit", "junit_path", type=click.Path(dir_okay=False), default=None,
              callback=_output_file("--junit", (".xml",)),
              metavar="FILE", help="also write JUnit XML (one test case per certificate)")
@_executor_options()
def check_certificates(directory, as_json, junit_path, workers, scheduler):
    """Validate and re-run every certificate in DIRECTORY and compare each value by its
    evidence kind.  Exit 0 when all check out, 1 naming each one that differs, 2 when one
    is not a valid certificate (or DIRECTORY is none)."""
    from attngeom.core.atomic_files import write_text_atomically
    check = api.check_certificates(directory, workers=workers, scheduler=scheduler,
                                   progress=_progress(as_json))
    if junit_path:
        try:
            write_text_atomically(Path(junit_path), check.junit())
        except OSError as error:
            raise BadInput(f"cannot write {junit_path}: {error.strerror or error}") from None
    click.echo(json.dumps(check.to_json(), indent=1) if as_json else str(check))
    invalid = [r.path.name for r in check.invalid]
    if invalid:
        raise BadInput(f"{len(invalid)} file(s) are not valid certificates and were not run: "
                       f"{', '.join(invalid[:5])}{' ...' if len(invalid) > 5 else ''}")
    return 0 if check.ok else 1


@cli.command("errata")
@click.option("--source", type=click.Choice(SOURCES), default=None, help="only this paper")
@click.option("--format", "fmt", type=click.Choice(ERRATA_FORMATS), default="text",
              show_default=True)
@click.option("--certificates", "cert_dir", type=click.Path(file_okay=False), default=None,
              metavar="DIR", help="read the verdicts of the certificates in DIR (one per paper "
                                  "example) instead of re-running the checks")
@_executor_options()
def errata(source, fmt, cert_dir, workers, scheduler):
    """Every printed statement found wrong across the papers: paper, location, kind, what is
    printed, what holds, the witness and the claim (attngeom.core.errata_report).  Runs every
    claim at its paper examples (as `certify --suite paper` does)."""
    report = api.errata(source, cert_dir, workers=workers, scheduler=scheduler,
                        progress=_progress(fmt == "json"))
    click.echo(report.render(fmt).rstrip("\n"))
    return 0


@cli.command("ideal")
@click.option("--d", "d", type=int, required=True, help="embedding dimension d")
@click.option("--t", "t", type=int, required=True, help="sequence length t")
@click.option("--a", "a", type=int, default=None, help="attention dimension: rank A <= a (default d)")
@click.option("--dprime", type=int, default=1, show_default=True, help="output dimension d'")
@click.option("--col", type=int, default=1, show_default=True, help="target column j")
@click.option("--max-degree", type=int, default=4, show_default=True, help="largest degree K")
@click.option("--families", default="all", show_default=True,
              help="family claims to attribute: all, none, or a comma list of ids")
@click.option("--family-param", "family_params", multiple=True, metavar="ID:NAME=VALUE",
              help="attribute family ID at NAME=VALUE instead of its defaults and variants "
                   "(e.g. veronese:r=2; repeatable)")
@click.option("--attribution-budget", default="1", show_default=True, metavar="X|none",
              help="work the attribution may spend, as a multiple of the ideal's own work "
                   "(counted as at least 5,000,000 units); families beyond it are reported as "
                   "skipped")
@click.option("--prime", type=int, default=None, help="the prime p < 2^31 (default 2^31 - 1)")
@click.option("--seed", type=int, default=0, show_default=True, help="random seed")
@click.option("--m2", "m2_path", type=click.Path(dir_okay=False, writable=True), default=None,
              callback=_output_file("--m2", (".m2",)),
              help="write a basis of each J_k (modulo J_1) in Macaulay2 syntax to FILE")
@click.option("--json", "as_json", is_flag=True, help="print the table as JSON")
@click.option("--heads", default=None, metavar="H", help="H heads, outputs summed (docs/beyond.md)")
@click.option("--skip", default=None, metavar="none|identity|linear",
              help="skip connection: f(X), f(X) + X, f(X) + W_s X")
@click.option("--causal", is_flag=True, help="causal mask: column j attends to columns 1..j")
@_executor_options()
def ideal(d, t, a, dprime, col, max_degree, families, family_params, attribution_budget, prime,
          seed, m2_path, as_json, heads, skip, causal, workers, scheduler):
    """The vanishing ideal of one output coordinate's attention variety, degree by degree
    (ADM Def 8): dim J_k, minimal generators, family attribution, HMK Cor 3.3."""
    report = api.ideal(d, t, a, dprime, col, max_degree, families=families,
                       family_params=family_params, attribution_budget=attribution_budget,
                       prime=prime, seed=seed, m2_file=m2_path, workers=workers,
                       scheduler=scheduler, progress=_progress(as_json), heads=heads,
                       skip=skip, causal=causal)
    if as_json:
        click.echo(json.dumps(report.to_json(), indent=1, default=str))
    else:
        click.echo(str(report))
    return 0


@cli.command("atlas")
@click.option("--grid", default=None, metavar="SPEC",
              help="points d,t,a[,d'][@K] separated by ';' (fields: N, LO..HI or X|Y); "
                   "default: the default grid (docs/atlas.md)")
@click.option("--max-degree", type=int, default=4, show_default=True,
              help="largest degree K of the points without @K")
@click.option("--out", "out_dir", type=click.Path(file_okay=False), default="atlas",
              show_default=True, help="folder of the point records and outputs; a rerun "
                                      "skips the points already there")
@click.option("--families", default="all", show_default=True,
              help="family claims to attribute: all, none, or a comma list of ids")
@click.option("--attribution-budget", default="1", show_default=True, metavar="X|none",
              help="the attribution's work as a multiple of the ideal's own (see ideal)")
@click.option("--seed", type=int, default=0, show_default=True, help="random seed")
@click.option("--check-m2", is_flag=True,
              help="also compute the minimal generators in Macaulay2 (elimination) and compare")
@click.option("--m2-budget", default="120", show_default=True, metavar="SECONDS",
              help="seconds one point's Macaulay2 run may take")
@click.option("--json", "as_json", is_flag=True, help="print the atlas as JSON")
@_executor_options()
def atlas(grid, max_degree, out_dir, families, attribution_budget, seed, check_m2, m2_budget,
          as_json, workers, scheduler):
    """The vanishing ideal over a grid of (d, t, a, d') and degrees (ADM Def 8): HF, minimal
    generators, HMK Cor 3.3, attribution, local completeness, Macaulay2 check."""
    report = api.atlas(grid, max_degree, out=out_dir, families=families,
                       attribution_budget=attribution_budget, seed=seed, check_m2=check_m2,
                       m2_budget=m2_budget, workers=workers, scheduler=scheduler,
                       progress=_progress(as_json))
    for note in report.notes:
        click.echo(f"attngeom: {note}", err=True)
    if as_json:
        click.echo(json.dumps(report.to_json(), indent=1, default=str))
    else:
        click.echo(str(report))
    return 0


@cli.command()
@click.option("--layers", default=None, metavar="L", help="number of layers l (default: from --d / --a)")
@click.option("--d", "d", default=None, metavar="D0,...,DL", help="dimensions d_0..d_l, or one integer")
@click.option("--a", "a", default=None, metavar="A1,...,AL", help="attention dimensions, or one integer")
@click.option("--t", "t", default=None, metavar="T", help="sequence length t")
@click.option("--dprime", default=None, metavar="D'", help="d_l when --d is one integer")
@click.option("--softmax", is_flag=True, help="softmax attention (HMK eq 15; float64 rank)")
@click.option("--heads", default=None, metavar="H", help="H heads, outputs summed (docs/beyond.md)")
@click.option("--skip", default=None, metavar="none|identity|linear",
              help="skip connection: f(X), f(X) + X, f(X) + W_s X")
@click.option("--causal", is_flag=True, help="causal mask: column j attends to columns 1..j")
@click.option("--figure3", is_flag=True, help="HMK Figure 3 (l=2, t=3, a=2, delta=3..10) as a PNG")
@click.option("--out", "out_dir", type=click.Path(file_okay=False), default=None,
              help="directory for --figure3's hmk_figure3.png")
@_check_options
@_executor_options()
def dimension(layers, d, a, t, dprime, softmax, heads, skip, causal, figure3, out_dir, workers,
              scheduler, method, backend, device, samples, seed, as_json):
    """Neuromanifold dimension (HMK): parameter count, formula, measured Jacobian rank, verdict.

    --workers / --scheduler run the points of --figure3 (one Jacobian rank each) in
    parallel, or one point where the cluster is."""
    from attngeom.lightning_alg.claims.hmk import dimension_lines, dimension_report
    from attngeom.lightning_alg.hmk.figure3 import figure3_rows, plot_figure3, rows_are_right
    from attngeom.core.executor import make_executor
    from attngeom.core.verdict import Status

    context = _context(seed, samples, backend, device, as_json)
    if figure3:
        if out_dir is None:
            raise BadInput("--figure3 needs --out DIR")
        with make_executor(workers, scheduler) as executor:
            rows = figure3_rows(context, executor=executor)
        path = plot_figure3(rows, Path(out_dir))
        if as_json:
            click.echo(json.dumps({"figure": str(path), "right": rows_are_right(rows),
                                   "rows": rows}, indent=1))
        else:
            click.echo("delta  params  softmax: rank eq16   lightning: rank corrected eq14-printed")
            for r in rows:
                click.echo(f"{r['delta']:>5}  {r['parameters']:>6}  {r['softmax_measured']:>13} "
                           f"{r['softmax_eq16']:>4}   {r['lightning_measured']:>15} "
                           f"{r['lightning_corrected']:>9} {r['lightning_eq14_printed']:>12}")
            click.echo(f"every point certified and as the mathematics says: {rows_are_right(rows)}")
            click.echo(f"figure: {path}")
        return 0
    verdict = api.dimension(d, t, a, layers=layers, dprime=dprime, softmax=softmax,
                            method=method, backend=backend, device=device, seed=seed,
                            samples=samples, workers=workers, scheduler=scheduler,
                            heads=heads, skip=skip, causal=causal)
    report = dimension_report(verdict)
    if as_json:
        click.echo(json.dumps(report, indent=1, default=str))
    elif verdict.status is not Status.NOT_APPLICABLE:
        for line in dimension_lines(report):
            click.echo(line)
    _raise_if_not_applicable(verdict)
    return verdict.exit_code


@cli.command()
@click.argument("witness", metavar="WITNESS")
@click.option("--ambient", type=int, default=None, help="decoder / stream dimension D")
@click.option("--values", type=int, default=None, help="sphere: number n of tokens")
@click.option("--gate-strength", "gate_strength", default=None,
              help="sphere: gate sigma(s X_g W_theta); 1 = GEC Thm 3.6, 0 = constant gate")
@click.option("--layers", type=int, default=None, help="normal-form: number L of layers")
@click.option("--amplitudes", default=None, help="normal-form: a_l, one value or a comma list")
@click.option("--psi", default=None, help="normal-form: psi(u, v) in SymPy syntax")
@click.option("--points", type=int, default=10, show_default=True, help="number of sampled points")
@click.option("--seed", type=int, default=0, show_default=True)
@click.option("--backend", type=click.Choice(BACKENDS), default="numpy", show_default=True)
@click.option("--device", type=click.Choice(DEVICES), default="cpu", show_default=True)
@click.option("--json", "as_json", is_flag=True)
def curvature(witness, points, seed, backend, device, as_json, **options):
    """Gaussian curvature of a named construction of GEC at sampled points.

    WITNESS: sphere (Thm 3.6's gated attention layer) or normal-form (Lemma 3.11's stack).
    Exit 1 when the construction misses its known curvature by more than 1e-10.
    """
    report = api.curvature(witness, points=points, seed=seed, backend=backend, device=device,
                           **options)
    if as_json:
        click.echo(json.dumps(report, indent=1))
    else:
        for line in report.lines():
            click.echo(line)
    return 1 if report.holds is False else 0


@cli.command("embed-tree")
@click.argument("tree_spec", metavar="TREE")
@click.option("--eps", default="0.1", show_default=True, help="target distortion 1 + eps (> 0)")
@click.option("--dim", type=int, default=2, show_default=True, help="dimension of H^d (2 only)")
@click.option("--construction", type=click.Choice(("sarkar", "sala")), default="sarkar",
              show_default=True, help="Sarkar's tau, or Sala et al. (ICML 2018)'s tau and root")
@click.option("--bits", type=int, default=None, help="fractional bits of the stored coordinates")
@click.option("--find-bits", is_flag=True, help="also search the fewest bits needed")
@click.option("--plot", "plot_path", default=None, metavar="FILE.png", help="draw the embedding",
              callback=_output_file("--plot", (".png", ".pdf", ".svg")))
@click.option("--json", "as_json", is_flag=True)
def embed_tree(tree_spec, eps, dim, construction, bits, find_bits, plot_path, as_json):
    """Embed a tree in the Poincare disk (RGT Thm 3.4 (2)) and measure its distortion.

    TREE: path:N, star:N, balanced:R:DEPTH, random:N[:SEED] or an edge-list file.
    Exit 1 when the worst-case distortion over all pairs exceeds 1 + eps.
    """
    from attngeom.geometry_proofs.hyperbolic.embedding_reports import embed_tree as run, plot_tree_embedding
    progress = _progress(as_json)
    report = run(tree_spec, eps, dim, construction, bits, find_bits,
                 **({"progress": progress} if progress else {}))
    embedding = report.pop("_embedding")
    if plot_path:
        report["plot"] = plot_tree_embedding(embedding, plot_path)
    if as_json:
        click.echo(json.dumps(report, indent=1, default=str))
    else:
        click.echo(f"{report['tree']}: {report['nodes']} nodes, height {report['height']} "
                   f"below root {report['root']}, max degree {report['max_degree']}")
        click.echo(f"  construction {construction}   tau {report['tau']:.6g}   "
                   f"eps {report['eps']:g}   H^{dim}")
        click.echo(f"  worst-case distortion {report['worst_distortion']:.12g} over "
                   f"{report['pairs']} pairs   (target <= {1 + report['eps']:g})")
        click.echo(f"  average distortion    {report['average_distortion']:.6g}   "
                   f"(mean of |d_H / (tau d_T) - 1| over all pairs)")
        click.echo(f"  precision             {report['bits']} fractional bits "
                   f"(working {report['work_bits']})")
        if "bits_for_target" in report:
            click.echo(f"  bits needed           {report['bits_for_target']} for <= 1 + eps, "
                       f"{report['bits_stable']} for a stable distortion")
        if "sala_bits_estimate" in report:
            click.echo(f"  Sala et al. estimate  {report['sala_bits_estimate']:.1f} bits")
        if not report["valid"]:
            click.echo(f"  {report['reason']}")
        if plot_path:
            click.echo(f"  plot                  {plot_path}")
        click.echo(f"  time                  {report['seconds']:.2f} s")
    return 0 if report["holds"] else 1


@cli.group()
def benchmark():
    """Timing benchmarks of the library's kernels."""


@benchmark.command("gauge-attention")
@click.option("--n", "tokens", type=int, default=128, show_default=True, help="sequence length N")
@click.option("--k", "dim", type=int, default=100, show_default=True, help="embedding dimension K")
@click.option("--heads", type=int, default=5, show_default=True, help="heads H (K = H x n, SO(n))")
@click.option("--batch", type=int, default=3, show_default=True, help="sequences per batch")
@click.option("--diagonal", is_flag=True, help="diagonal Sigma (GT's configuration)")
@click.option("--backend", type=click.Choice(BACKENDS), default="numpy", show_default=True)
@click.option("--device", type=click.Choice(DEVICES), default="cpu", show_default=True)
@click.option("--repeats", type=int, default=5, show_default=True, help="timed runs (median)")
@click.option("--no-direct", "no_direct", is_flag=True, help="skip the O(N^2 n^3) direct kernel")
@click.option("--dtype", type=click.Choice(["float64", "float32"]), default="float64", show_default=True,
              help="precision of every kernel (float32: reports its error against float64)")
@click.option("--seed", type=int, default=0, show_default=True)
@click.option("--gt-code", "gt_code", is_flag=True,
              help="also time GT's public code (ATTNGEOM_GT_CODE=checkout), full and diagonal Sigma")
@click.option("--cuda-graphs", "cuda_graphs", is_flag=True,
              help="also time the structured kernel (returning clones, and its static outputs) and "
                   "the standard layer replayed from CUDA graphs (torch on cuda; elsewhere the "
                   "eager paths, reported as not graphed)")
@click.option("--compile", "compiled", is_flag=True,
              help="also time the structured kernel and the standard layer compiled by "
                   "torch.compile (torch; compiled in the untimed warm-up; elsewhere the eager "
                   "paths, reported as not compiled)")
@click.option("--json", "as_json", is_flag=True)
def gauge_attention(tokens, dim, heads, batch, diagonal, backend, device, repeats, no_direct,
                    dtype, seed, gt_code, cuda_graphs, compiled, as_json):
    """GT KL attention: structured vs direct kernel vs standard attention (GT Table 4)."""
    from attngeom.geometry_proofs.gauge.attention_benchmark import (BenchmarkConfig, format_report,
                                                           run_benchmark)
    config = BenchmarkConfig(tokens=tokens, dim=dim, heads=heads, batch=batch,
                             diagonal=diagonal, backend=backend, device=device,
                             repeats=repeats, direct=not no_direct, seed=seed, dtype=dtype,
                             cuda_graphs=cuda_graphs, compiled=compiled)
    config.validate()
    if gt_code:
        from attngeom.geometry_proofs.gauge.gt_baseline import gt_baseline_section, validate_gt_config
        validate_gt_config(config)
    progress = _progress(as_json)
    report = run_benchmark(config, **({"progress": progress} if progress else {}))
    text = format_report(report)
    if gt_code:
        report["gt_baseline"], gt_text = gt_baseline_section(config)
        text += "\n" + gt_text
    click.echo(json.dumps(report, indent=1) if as_json else text)
    return 0


@benchmark.command("hyperbolic-attention")
@click.option("--n", "sizes", default="128,256,512,1024", show_default=True, help="sequence lengths N")
@click.option("--d", "dim", type=int, default=64, show_default=True, help="dimension d")
@click.option("--backend", type=click.Choice(BACKENDS), default="numpy", show_default=True)
@click.option("--device", type=click.Choice(DEVICES), default="cpu", show_default=True)
@click.option("--repeats", type=int, default=5, show_default=True, help="timed runs (best)")
@click.option("--seed", type=int, default=0, show_default=True)
@click.option("--cuda-graphs", "cuda_graphs", is_flag=True,
              help="also time every kernel replayed from CUDA graphs (torch on cuda; elsewhere "
                   "the eager kernels, reported as not graphed)")
@click.option("--compile", "compiled", is_flag=True,
              help="also time every kernel compiled by torch.compile (torch; seconds of "
                   "compilation per kernel and N, untimed; elsewhere the eager kernels, "
                   "reported as not compiled)")
@click.option("--json", "as_json", is_flag=True)
def hyperbolic_attention(sizes, dim, backend, device, repeats, seed, cuda_graphs, compiled, as_json):
    """RGT attention in Gram form vs Euclidean attention (RGT Table 1, issue 26)."""
    from attngeom.geometry_proofs.hyperbolic.attention_benchmark import (BenchmarkConfig, format_report,
                                                                run_benchmark)
    try:
        sizes = tuple(int(n) for n in sizes.split(","))
    except ValueError:
        raise BadInput(f"--n takes a comma list of integers; got {sizes!r}") from None
    config = BenchmarkConfig(sizes=sizes, dim=dim, backend=backend, device=device,
                             repeats=repeats, seed=seed, cuda_graphs=cuda_graphs, compiled=compiled)
    config.validate()
    progress = _progress(as_json)
    report = run_benchmark(config, **({"progress": progress} if progress else {}))
    click.echo(json.dumps(report, indent=1) if as_json else format_report(report))
    return 0


@cli.group()
def experiment():
    """Training experiments of the papers (GEC §4)."""


@experiment.command("gec")
@click.option("--task", type=click.Choice(("curved", "linear", "ablation", "all")), default="all",
              show_default=True, help="the grid: Fig 2-4, Table 1, Fig 5, or all")
@click.option("--seeds", default="0-4", show_default=True, help="seeds: 0-4 or 0,1,2")
@click.option("--epochs", type=int, default=20, show_default=True)
@_executor_options(workers_default="one per CPU, at most one per run")
@click.option("--centres", type=int, default=256, show_default=True,
              help="test centres carrying the proxy and the invariant curvature")
@click.option("--device", type=click.Choice(DEVICES), default="cpu", show_default=True)
@click.option("--out", "out_dir", type=click.Path(file_okay=False), required=True)
@click.option("--json", "as_json", is_flag=True)
def experiment_gec(task, seeds, epochs, workers, scheduler, centres, device, out_dir, as_json):
    """Train GEC's single-block attention models (App. A.5), measure the paper's curvature
    proxy and the invariant Gaussian curvature, write the CSV, figures and Table 1."""
    from attngeom.geometry_proofs.gating.experiment.report import run_and_report, summary_lines
    from attngeom.geometry_proofs.gating.experiment.runner import experiment_config
    from attngeom.core.executor import make_executor
    config = experiment_config(task, seeds, epochs, workers, centres, device)
    with make_executor(workers if scheduler else config.workers, scheduler) as executor:
        summary = run_and_report(config, Path(out_dir), _progress(as_json), executor)
    if as_json:
        click.echo(json.dumps(summary, indent=1, default=str))
    else:
        for line in summary_lines(summary):
            click.echo(line)
    return 0


@experiment.command("gec-readings")
@click.option("--seeds", default="0-4", show_default=True, help="seeds: 0-4 or 0,1,2")
@click.option("--epochs", type=int, default=20, show_default=True)
@click.option("--init", "inits", multiple=True,
              type=click.Choice(("lecun-normal", "torch-default")),
              help="initialisation schemes (repeatable; default: both)")
@click.option("--centres", type=int, default=256, show_default=True,
              help="test sequences carrying the proxies")
@_executor_options(workers_default="one per CPU, at most one per run")
@click.option("--device", type=click.Choice(DEVICES), default="cpu", show_default=True)
@click.option("--out", "out_path", type=click.Path(dir_okay=False), required=True,
              callback=_output_file("--out", (".csv",)),
              help="the readings CSV to write (committed: attngeom/geometry_proofs/gating/"
                   "experiment/data/readings.csv)")
def experiment_gec_readings(seeds, epochs, inits, centres, workers, scheduler, device, out_path):
    """Retrain GEC's gated curved-task runs (every alpha, seed and init) and measure the
    proxy under every reading the paper leaves open (layer: block / post-LN; direction
    space: sequence / latent centre): the table behind the readings of the GEC §4.1 claims."""
    import os
    import time
    from dataclasses import replace as _replace
    from attngeom.geometry_proofs.gating.experiment import readings
    from attngeom.core.executor import make_executor
    config = readings.readings_config(seeds, epochs, 1 if workers is None else workers, inits, device)
    if not 1 <= centres <= 1000:
        raise BadInput(f"--centres must be between 1 and 1000; got {centres}")
    runs = len(config.specs())
    config = _replace(config, centres=centres,
                      workers=workers or min(os.cpu_count() or 1, runs))
    start = time.perf_counter()
    with make_executor(workers if scheduler else config.workers, scheduler) as executor:
        rows = readings.run_readings(config, _progress(False), executor)
    path = readings.write(rows, Path(out_path))
    click.echo(f"{runs} runs, {len(rows)} rows -> {path} ({time.perf_counter() - start:.1f} s)")
    return 0


def main(argv=None) -> None:
    """Console entry point: exit 0 / 1 / 2 per the CLI contract, never a traceback on bad input."""
    try:
        code = cli.main(args=argv, prog_name="attngeom", standalone_mode=False)
    except NotApplicable as hypothesis:
        click.echo(f"attngeom: not-applicable: {hypothesis}", err=True)
        code = 2
    except BadInput as error:
        click.echo(f"attngeom: error: {error}", err=True)
        code = 2
    except click.exceptions.Exit as stop:
        code = stop.exit_code
    except click.exceptions.Abort:
        click.echo("attngeom: aborted", err=True)
        code = 1
    except click.ClickException as error:
        click.echo(f"attngeom: error: {error.format_message()}", err=True)
        code = 2
    except MemoryError:
        click.echo("attngeom: error: out of memory; choose smaller dimensions", err=True)
        code = 2
    except (OverflowError, FloatingPointError) as error:
        shown = str(error)[:120] or "a value beyond float64"
        click.echo(f"attngeom: error: floating-point overflow ({shown}); choose smaller values",
                   err=True)
        code = 2
    except RecursionError:
        click.echo("attngeom: error: the input is nested too deeply", err=True)
        code = 2
    except OSError as error:
        where = f" {error.filename}" if error.filename else ""
        click.echo(f"attngeom: error: cannot use{where}: {error.strerror or error}", err=True)
        code = 2
    sys.exit(code if isinstance(code, int) else 0)


if __name__ == "__main__":
    main()
