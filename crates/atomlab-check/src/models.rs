//! Which models judge a batch: the built-in ones selected by name, and cat
//! models loaded from files or a herd7 `.cfg` (whose `bell`, `variant` and
//! `model` settings merge with the caller's as herd7 merges `-conf` with
//! its command line).

use std::path::{Path, PathBuf};

use atomlab_cat::{CatError, CatModel};
use atomlab_model::models::Model;
use atomlab_model::{ModelChoice, MODEL_NAMES};

use atomlab_core::progress::{Event, Sink};

use crate::{Note, Options};

/// A cat model file (or a cfg file), with the name its column takes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModelFile {
    /// The model's name; `None`: the file's stem.
    pub name: Option<String>,
    /// The file.
    pub path: PathBuf,
}

/// Where a model that failed to load came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ModelFrom {
    /// The cfg file's `model`.
    Conf,
    /// `Options::model_files[i]`.
    File(usize),
}

/// Why the models of a batch could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    /// A built-in model name that is not one.
    #[error("unknown model {0:?}; the built-in models are {names}, or all", names = MODEL_NAMES.join(", "))]
    UnknownModel(String),
    /// The cfg file could not be read or parsed.
    #[error("the cfg file cannot be used")]
    Conf(#[source] CatError),
    /// The cfg file's `macros` file does not exist.
    #[error("its macros file {} does not exist", .0.display())]
    MacrosMissing(PathBuf),
    /// The cfg file names no model, and no model file was given.
    #[error("the cfg file names no model (a `model FILE.cat` line)")]
    ConfNamesNoModel,
    /// The bell file does not exist.
    #[error("{}: no such file", .0.display())]
    BellMissing(PathBuf),
    /// A bell file or variants were given, but no cat model to apply them to.
    #[error("a bell file and variants apply to cat models: give a model file or a cfg file")]
    CatSettingsWithoutModel,
    /// A cat model could not be loaded.
    #[error("the model cannot be loaded")]
    Model {
        /// Which one.
        from: ModelFrom,
        /// Why, with its file:line:column.
        #[source]
        error: CatError,
    },
}

fn stem(file: &Path) -> String {
    file.file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| file.display().to_string())
}

/// Loads each model file and the model of the cfg file (refusing a bad
/// one, with its file:line:column, before any test is judged).
pub(crate) fn load(opts: &Options, progress: Sink<'_>) -> Result<Vec<CatModel>, LoadError> {
    if let Some(m) = opts
        .models
        .iter()
        .find(|m| *m != "all" && !MODEL_NAMES.contains(&m.as_str()))
    {
        return Err(LoadError::UnknownModel(m.clone()));
    }
    let mut cat = atomlab_cat::Options {
        bell: opts.bell.clone(),
        variants: opts.variants.clone(),
        cat_path: opts.cat_path.clone(),
    };
    let mut specs: Vec<(String, PathBuf, ModelFrom)> = Vec::new();
    if let Some(spec) = &opts.conf {
        let conf = atomlab_cat::conf::read(&spec.path).map_err(LoadError::Conf)?;
        if cat.bell.is_none() {
            cat.bell = conf.bell.clone();
        }
        if opts.variants.is_empty() {
            cat.variants = conf.variants.clone();
        }
        if let Some(def) = &conf.macros {
            if !def.is_file() {
                return Err(LoadError::MacrosMissing(def.clone()));
            }
            let note = Note::MacrosNotRead(def.clone());
            progress(Event::Note(&format!(
                "note: --conf {}: {note}",
                spec.path.display()
            )));
        }
        match &conf.model {
            Some(m) if opts.model_files.is_empty() => specs.push((
                spec.name.clone().unwrap_or_else(|| stem(m)),
                m.clone(),
                ModelFrom::Conf,
            )),
            Some(_) => {}
            None if opts.model_files.is_empty() => return Err(LoadError::ConfNamesNoModel),
            None => {}
        }
    }
    if let Some(b) = &cat.bell {
        if !b.is_file() {
            return Err(LoadError::BellMissing(b.clone()));
        }
    }
    for (i, f) in opts.model_files.iter().enumerate() {
        specs.push((
            f.name.clone().unwrap_or_else(|| stem(&f.path)),
            f.path.clone(),
            ModelFrom::File(i),
        ));
    }
    if specs.is_empty() && (opts.bell.is_some() || !opts.variants.is_empty()) {
        return Err(LoadError::CatSettingsWithoutModel);
    }
    specs
        .into_iter()
        .map(|(name, file, from)| {
            atomlab_cat::load_with(&name, &file, &cat)
                .map_err(|error| LoadError::Model { from, error })
        })
        .collect()
}

/// The models that judge: the built-in ones selected (`all`, or none and
/// no cat model, selects every one), a cat model named like one of them
/// in its place, then the other cat models.
pub(crate) fn choose<'m>(selected: &[String], given: &'m [CatModel]) -> Vec<ModelChoice<'m>> {
    let builtin: Vec<&'static str> =
        if selected.iter().any(|m| m == "all") || (selected.is_empty() && given.is_empty()) {
            MODEL_NAMES.to_vec()
        } else {
            MODEL_NAMES
                .iter()
                .copied()
                .filter(|m| selected.iter().any(|a| a == m))
                .collect()
        };
    // A model file named like a selected built-in model judges in its place.
    let mut choices: Vec<ModelChoice<'_>> = builtin
        .iter()
        .map(|b| match given.iter().find(|g| g.name() == *b) {
            Some(g) => ModelChoice::Given(g),
            None => ModelChoice::Named(b),
        })
        .collect();
    for g in given {
        if !builtin.contains(&g.name()) {
            choices.push(ModelChoice::Given(g));
        }
    }
    choices
}

/// A choice's name, as its column and records name it.
pub(crate) fn name<'m>(c: &ModelChoice<'m>) -> &'m str {
    match c {
        ModelChoice::Named(n) => n,
        ModelChoice::Given(g) => g.name(),
    }
}
