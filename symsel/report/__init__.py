"""The main job, ``symsel report``: the summary, tables and figures (:mod:`.main`), and one module of
figures per paper or theme (:mod:`.figures`, :mod:`.figures_extra`, :mod:`.figures_rdp`,
:mod:`.figures_tuning`, :mod:`.figures_xiang`). The mathematics they plot lives in the library.
"""
