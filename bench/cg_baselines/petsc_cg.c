/* PETSc KSPCG baseline for ky_cg on CPU ranks (bench/cg_baselines/petsc_cg.sh builds and runs it; never part
 * of the build or of `make test`). The same 3-D 7-point Poisson matrix as ky_csr_generate("poisson7:M")
 * (6 on the diagonal, -1 for each neighbour, Dirichlet), rows split evenly (PETSC_DECIDE), b = A * ones,
 * x0 = 0, CG without preconditioner for exactly ITERS iterations (rtol 1e-30: never met), as a user would
 * write it. Prints one line: ranks, N, nnz, iterations, seconds per iteration (the slowest rank's, best of
 * REPS solves). Usage: petsc_cg M ITERS [REPS] */
#include <petscksp.h>

int main(int argc, char **argv)
{
    PetscCall(PetscInitialize(&argc, &argv, NULL, NULL));
    PetscInt m = argc > 1 ? atoi(argv[1]) : 32, iters = argc > 2 ? atoi(argv[2]) : 200;
    int reps = argc > 3 ? atoi(argv[3]) : 3;
    PetscInt n = m * m * m, lo, hi;
    Mat A;
    PetscCall(MatCreateAIJ(PETSC_COMM_WORLD, PETSC_DECIDE, PETSC_DECIDE, n, n, 7, NULL, 6, NULL, &A));
    PetscCall(MatGetOwnershipRange(A, &lo, &hi));
    for (PetscInt i = lo; i < hi; i++) {
        PetscInt x = i % m, y = (i / m) % m, z = i / (m * m), cols[7], k = 0;
        PetscScalar v[7];
        if (z > 0) {
            cols[k] = i - m * m;
            v[k++] = -1;
        }
        if (y > 0) {
            cols[k] = i - m;
            v[k++] = -1;
        }
        if (x > 0) {
            cols[k] = i - 1;
            v[k++] = -1;
        }
        cols[k] = i;
        v[k++] = 6;
        if (x < m - 1) {
            cols[k] = i + 1;
            v[k++] = -1;
        }
        if (y < m - 1) {
            cols[k] = i + m;
            v[k++] = -1;
        }
        if (z < m - 1) {
            cols[k] = i + m * m;
            v[k++] = -1;
        }
        PetscCall(MatSetValues(A, 1, &i, k, cols, v, INSERT_VALUES));
    }
    PetscCall(MatAssemblyBegin(A, MAT_FINAL_ASSEMBLY));
    PetscCall(MatAssemblyEnd(A, MAT_FINAL_ASSEMBLY));
    Vec x, b, ones;
    PetscCall(MatCreateVecs(A, &x, &b));
    PetscCall(VecDuplicate(x, &ones));
    PetscCall(VecSet(ones, 1.0));
    PetscCall(MatMult(A, ones, b));
    KSP ksp;
    PC pc;
    PetscCall(KSPCreate(PETSC_COMM_WORLD, &ksp));
    PetscCall(KSPSetOperators(ksp, A, A));
    PetscCall(KSPSetType(ksp, KSPCG));
    PetscCall(KSPGetPC(ksp, &pc));
    PetscCall(PCSetType(pc, PCNONE));
    PetscCall(KSPSetTolerances(ksp, 1e-30, 0.0, 1e30, iters));
    PetscCall(KSPSetFromOptions(ksp));
    PetscCall(KSPSetUp(ksp));
    double best = 1e30;
    PetscInt its = 0;
    for (int r = 0; r < reps; r++) {
        PetscCall(VecSet(x, 0.0));
        PetscCall(MPI_Barrier(PETSC_COMM_WORLD));
        double t0 = MPI_Wtime();
        PetscCall(KSPSolve(ksp, b, x));
        double t = MPI_Wtime() - t0;
        PetscCall(MPI_Allreduce(MPI_IN_PLACE, &t, 1, MPI_DOUBLE, MPI_MAX, PETSC_COMM_WORLD));
        PetscCall(KSPGetIterationNumber(ksp, &its));
        if (t < best) best = t;
    }
    MatInfo info;
    PetscCall(MatGetInfo(A, MAT_GLOBAL_SUM, &info));
    PetscMPIInt size;
    PetscCall(MPI_Comm_size(PETSC_COMM_WORLD, &size));
    PetscCall(PetscPrintf(PETSC_COMM_WORLD,
                          "petsc_cg ranks %d N %d nnz %.0f iterations %d us_per_iter %.3f\n", size, (int)n,
                          info.nz_used, (int)its, 1e6 * best / (its > 0 ? its : 1)));
    PetscCall(KSPDestroy(&ksp));
    PetscCall(VecDestroy(&x));
    PetscCall(VecDestroy(&b));
    PetscCall(VecDestroy(&ones));
    PetscCall(MatDestroy(&A));
    PetscCall(PetscFinalize());
    return 0;
}
